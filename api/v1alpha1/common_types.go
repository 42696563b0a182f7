package v1alpha1

// SecretKeyReference names one key of a Secret in the referring object's namespace.
type SecretKeyReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Key in the Secret's data. Defaults to "value", the key Cluster API uses for kubeconfigs.
	// +kubebuilder:default=value
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Key string `json:"key,omitempty"`
}

// DefaultKubeconfigKey is the key read from a kubeconfig Secret when a reference names none.
const DefaultKubeconfigKey = "value"

// KeyOrDefault returns the referenced key, or DefaultKubeconfigKey when none is set.
func (r SecretKeyReference) KeyOrDefault() string {
	if r.Key == "" {
		return DefaultKubeconfigKey
	}
	return r.Key
}
