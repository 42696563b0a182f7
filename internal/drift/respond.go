package drift

import (
	"fmt"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Situation is what Respond needs to know about one object whose cluster copy is no longer as
// Holdfast left it, besides the Verdict.
type Situation struct {
	// Key identifies the object for fight counting.
	Key ObjectKey
	// Service declares the object.
	Service string
	// Previous and PreviousMessage are the object's state and message in status before.
	Previous        holdfastv1.ResourceState
	PreviousMessage string
	// Manual is true while a manual correction request is handled.
	Manual bool
	// Now is the time of the reconcile.
	Now time.Time
	// Manager is who made the drift, as recorded (for the Contested message).
	Manager string
}

// Response is what drift handling does about the object.
type Response struct {
	// Correct: put it back now.
	Correct bool
	// Record: the object drifted in a way that counts; its drift belongs in status.
	Record bool
	// State and Message are the object's status: when it is not corrected now, and when it is
	// corrected while Contested (InSync when it is corrected otherwise).
	State   holdfastv1.ResourceState
	Message string
	// Contested is true when the object became Contested now. When its correction waits for
	// the fight backoff, Fights.Next says until when.
	Contested bool
}

// Respond decides what to do about one object whose cluster copy changed or is gone, in this
// order: a service that opted out keeps the change; a change that does not count (only ignored
// fields, see Decide) is re-applied, which leaves ignored fields to their owner; a manual request
// corrects (and resumes a Contested object); a Contested object waits for one when the fight
// action is Stop; in Report mode outside a correction window a refused correction stays
// Uncorrectable and any other drift is reported and waits;
// an object corrected FightMax times within FightWindow becomes Contested and is corrected with
// a backoff (or, with Stop, no more); anything else is corrected. fights counts the corrections.
func (p *Policy) Respond(v Verdict, s Situation, fights *Fights) Response {
	contestedBefore := s.Previous == holdfastv1.ResourceContested
	switch {
	case p.OptOut:
		return Response{State: holdfastv1.ResourceIgnored,
			Message: fmt.Sprintf("service %q opted out of drift handling: changes on the cluster are kept", s.Service)}
	case !v.Drifted:
		return Response{Correct: true}
	case s.Manual:
		fights.Forget(s.Key)
		return Response{Correct: true, Record: true, State: holdfastv1.ResourceInSync}
	case contestedBefore && p.FightStop:
		return Response{Record: true, State: holdfastv1.ResourceContested, Message: s.PreviousMessage}
	case !p.CorrectsNow(s.Now) && s.Previous == holdfastv1.ResourceUncorrectable:
		// A correction someone asked for was refused: it stays refused, with the API server's
		// reason, until the next request or window (not reported as a new drift).
		return Response{Record: true, State: holdfastv1.ResourceUncorrectable, Message: s.PreviousMessage}
	case !p.CorrectsNow(s.Now):
		state := holdfastv1.ResourceDrifted
		if v.Deleted {
			state = holdfastv1.ResourceMissing
		}
		return Response{Record: true, State: state,
			Message: "drift reported; corrected on request (holdfast correct) or in a correction window"}
	}
	d := fights.Decide(s.Key, s.Now, p.fightRules(), contestedBefore)
	if !d.Contested {
		return Response{Correct: true, Record: true, State: holdfastv1.ResourceInSync}
	}
	msg := fmt.Sprintf("corrected %d times in %s and changed back each time", p.FightMax, p.FightWindow)
	if s.Manager != "" {
		msg += " by field manager " + s.Manager
	}
	switch {
	case p.FightStop:
		msg += "; not corrected until a manual request (holdfast correct)"
	case d.Correct:
		msg += fmt.Sprintf("; corrected again at %s, with a backoff of up to %s between corrections", s.Now.UTC().Format(time.RFC3339), p.FightMaxBackoff)
	default:
		msg += fmt.Sprintf("; next correction at %s (backoff, up to %s)", d.Next.UTC().Format(time.RFC3339), p.FightMaxBackoff)
	}
	return Response{Correct: d.Correct, Record: true, State: holdfastv1.ResourceContested, Message: msg,
		Contested: d.NewlyContested}
}
