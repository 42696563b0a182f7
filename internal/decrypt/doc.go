// Package decrypt opens files encrypted with SOPS (https://getsops.io), in memory, with the
// keys of one decryption Secret: a ServiceTemplate's spec.decryption.secretRef, in the
// template's namespace. Package templatesource decrypts an artifact's files with it each time
// the template is rendered, and marks what came out of it sensitive.
//
// The controller serves many tenants at once, so nothing here is process-wide: keys are parsed
// from the Secret's data (ParseKeys: entries ending in .agekey are age identity files, entries
// ending in .asc armored PGP private keys, as Flux's kustomize-controller reads them) into a
// Keys value, and a SOPS file's data key is recovered through an in-memory key service that
// knows those keys and nothing else. SOPS's own local key service is never used: it reads
// identities from environment variables and home directories, runs gpg with the process's
// keyring, and reaches cloud KMSes with the process's credentials — another tenant's keys, or
// the controller's. Key material is never written to disk; age plugin identities (which run a
// program) are refused; a file encrypted for a KMS or Vault key cannot be opened.
//
// File decrypts a whole YAML or JSON file as sops(1) does (whole-file encryption, or the parts
// encrypted_regex, unencrypted_suffix and the like select) and checks its MAC, so that a file
// changed after it was encrypted is refused rather than applied. Errors name the file's keys
// and the Secret's by their public parts (age recipients, PGP fingerprints) and never quote the
// file: neither SOPS's nor a parser's messages are passed on, since they can quote values.
package decrypt
