package model

import "encoding/json"

// CloudConfig is the subset of Cloud-Init's cloud-config that vmop renders into user data.
type CloudConfig struct {
	// Timezone is the guest's time zone as found under /usr/share/zoneinfo.
	Timezone string `json:"timezone,omitempty"`

	// DefaultUserEnabled keeps the distribution's default user even when users are listed.
	DefaultUserEnabled bool `json:"defaultUserEnabled,omitempty"`

	// Users are the users to create or configure.
	// +listType=map
	// +listMapKey=name
	Users []CloudConfigUser `json:"users,omitempty"`

	// RunCmd lists commands run at first boot, each a string or a list of argument strings.
	// +kubebuilder:pruning:PreserveUnknownFields
	RunCmd json.RawMessage `json:"runcmd,omitempty"`

	// WriteFiles are files written to the guest's file system.
	// +listType=map
	// +listMapKey=path
	WriteFiles []CloudConfigWriteFile `json:"write_files,omitempty"`

	// SSHPwdAuth says whether SSH accepts password authentication.
	SSHPwdAuth *bool `json:"ssh_pwauth,omitempty"`
}

// CloudConfigUser is one user in a cloud-config.
type CloudConfigUser struct {
	// Name is the user's login name, or "default" for the distribution's default user.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// CreateGroups may be set to false to skip creating the user's groups.
	CreateGroups *bool `json:"create_groups,omitempty"`

	// ExpireDate is the date the account is disabled, e.g. 2032-01-31.
	ExpireDate *string `json:"expiredate,omitempty"`

	// Gecos is a comment about the user, usually the real name and contact details.
	Gecos *string `json:"gecos,omitempty"`

	// Groups are additional groups the user joins.
	Groups []string `json:"groups,omitempty"`

	// HashedPasswd is a password hash from a Secret, applied even if the user exists.
	HashedPasswd *SecretKeySelector `json:"hashed_passwd,omitempty"`

	// Homedir is the user's home directory; /home/<name> by default.
	Homedir *string `json:"homedir,omitempty"`

	// Inactive is the number of days after password expiry until the account is disabled.
	Inactive *int32 `json:"inactive,omitempty"`

	// LockPasswd disables password login for the user.
	LockPasswd *bool `json:"lock_passwd,omitempty"`

	// NoCreateHome skips creating the home directory.
	NoCreateHome *bool `json:"no_create_home,omitempty"`

	// NoLogInit skips initializing lastlog and faillog for the user.
	NoLogInit *bool `json:"no_log_init,omitempty"`

	// NoUserGroup skips creating a group named after the user.
	NoUserGroup *bool `json:"no_user_group,omitempty"`

	// Passwd is a password hash from a Secret, applied only when the user is created.
	Passwd *SecretKeySelector `json:"passwd,omitempty"`

	// PrimaryGroup is the user's primary group; the user's name by default.
	PrimaryGroup *string `json:"primary_group,omitempty"`

	// SELinuxUser is the SELinux user for the user's logins.
	SELinuxUser *string `json:"selinux_user,omitempty"`

	// Shell is the user's login shell.
	Shell *string `json:"shell,omitempty"`

	// SnapUser is an e-mail address under which the user is created as a Snappy user.
	SnapUser *string `json:"snapuser,omitempty"`

	// SSHAuthorizedKeys are public SSH keys that may log in as the user.
	SSHAuthorizedKeys []string `json:"ssh_authorized_keys,omitempty"`

	// SSHImportID are SSH key IDs to import for the user, e.g. gh:octocat.
	SSHImportID []string `json:"ssh_import_id,omitempty"`

	// SSHRedirectUser disables SSH logins as this user and points to the default user instead.
	SSHRedirectUser *bool `json:"ssh_redirect_user,omitempty"`

	// Sudo is a sudoers rule for the user, e.g. ALL=(ALL) NOPASSWD:ALL.
	Sudo *string `json:"sudo,omitempty"`

	// System creates the user as a system user without a home directory.
	System *bool `json:"system,omitempty"`

	// UID is the user's numeric ID; the next free one when unset.
	UID *int64 `json:"uid,omitempty"`
}

// CloudConfigWriteFile is one file written by cloud-config.
type CloudConfigWriteFile struct {
	// Append adds the content to the end of an existing file instead of replacing it.
	Append bool `json:"append,omitempty"`

	// Content is the file's content: a string, or a {name, key} selector of a Secret key.
	// +kubebuilder:pruning:PreserveUnknownFields
	Content json.RawMessage `json:"content,omitempty"`

	// Defer writes the file in Cloud-Init's final stage, after users and packages exist.
	Defer bool `json:"defer,omitempty"`

	// Encoding is how the content is encoded.
	// +kubebuilder:validation:Enum=b64;base64;gz;gzip;"gz+b64";"gz+base64";"gzip+b64";"gzip+base64";"text/plain"
	// +kubebuilder:default="text/plain"
	Encoding string `json:"encoding,omitempty"`

	// Owner is the file's owner and group as user:group.
	// +kubebuilder:default="root:root"
	Owner string `json:"owner,omitempty"`

	// Path is the absolute path of the file.
	// +kubebuilder:validation:Required
	Path string `json:"path"`

	// Permissions are the file's permissions as an octal string.
	// +kubebuilder:default="0644"
	Permissions string `json:"permissions,omitempty"`
}
