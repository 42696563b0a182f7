package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// legacyDigestChars is the digest length of revisions named before digestChars: such a name is
// still checked against its data, with the 40 bits it carries, until the rollout replaces it.
const legacyDigestChars = 10

// Verify returns the snapshot a ControllerRevision holds when it is a revision the MultiClusterService
// controller made for mcs, and an error saying what is wrong otherwise. Revisions live next to
// the status objects, in namespaces where others may write ControllerRevisions (a tenant's,
// served by a platform service set), so nothing in one is trusted for being there:
//   - it must be labelled as mcs's and controlled by mcs (an owner reference with its UID), so
//     that a revision of another service set, or of an earlier one of the same name, is not used;
//   - its name must be the digest of the snapshot as decoded (encoded again, so that what is
//     checked is exactly what is used): owner references and labels can be copied by anyone
//     who may read the revision, but no one can make other data the name stands for. The name
//     is the root of trust: it is written into the status object by the controller alone.
//
// A revision that fails is not used at all (the caller deploys nothing from it); its name is
// not quoted back from the data, only the object's.
func Verify(cr *appsv1.ControllerRevision, mcs *holdfastv1.MultiClusterService) (*Snapshot, error) {
	problems := ownership(cr, mcs)
	snap, err := decode(cr)
	if err == nil {
		err = checkDigest(cr.Name, mcs.Name, snap)
	}
	if err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("ControllerRevision %s/%s is not a revision Holdfast made for MultiClusterService %s: %s",
			cr.Namespace, cr.Name, mcs.Name, strings.Join(problems, "; "))
	}
	return snap, nil
}

// checkDigest checks that name is the revision name of the snapshot for the service set mcs.
func checkDigest(name, mcs string, snap *Snapshot) error {
	data, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("encoding its snapshot: %w", err)
	}
	sum := digest(data)
	for _, n := range []int{digestChars, legacyDigestChars} {
		if name == naming.RevisionName(mcs, sum[:n]) {
			return nil
		}
	}
	return errors.New("its data does not match its name (the digest of the services and templates it holds): it was changed after Holdfast made it")
}

// Holds reports whether cr is mcs's revision holding exactly data, the bytes Encode made for
// its name: what Verify would accept, without decoding.
func Holds(cr *appsv1.ControllerRevision, mcs *holdfastv1.MultiClusterService, data []byte) bool {
	return len(ownership(cr, mcs)) == 0 && bytes.Equal(cr.Data.Raw, data)
}

// ownership says what is wrong with cr's label and controller for a revision of mcs.
func ownership(cr *appsv1.ControllerRevision, mcs *holdfastv1.MultiClusterService) []string {
	var problems []string
	if got, want := cr.Labels[holdfastv1.RevisionLabel], naming.LabelValue(mcs.Name); got != want {
		problems = append(problems, fmt.Sprintf("its label %s is %q, not %q", holdfastv1.RevisionLabel, got, want))
	}
	if owner := metav1.GetControllerOfNoCopy(cr); owner == nil || owner.Kind != "MultiClusterService" ||
		owner.APIVersion != holdfastv1.GroupVersion.String() || owner.Name != mcs.Name || owner.UID != mcs.UID {
		problems = append(problems, fmt.Sprintf("it is not controlled by MultiClusterService %s (UID %s)", mcs.Name, mcs.UID))
	}
	return problems
}
