package notify

// webhookConfigure reads the key Webhook bodies are signed with, byte for byte.
func webhookConfigure(t *Target, s secretKeys) error {
	key, ok := s.value(SecretKeyHMACKey)
	if !ok {
		return nil
	}
	if key == "" {
		return s.invalid(SecretKeyHMACKey, "is empty; remove it to send unsigned")
	}
	t.HMACKey = []byte(key)
	return nil
}

// webhookMessage is Holdfast's JSON event, signed when the target has a key. Only Webhook
// messages are signed: the other receivers check no signature of Holdfast's.
func webhookMessage(t Target, e Event) (message, error) {
	body, err := e.MarshalJSON()
	if err != nil {
		return message{}, err
	}
	return message{body: body, key: t.HMACKey}, nil
}
