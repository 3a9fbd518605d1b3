package model

// Sysprep is a Windows sysprep answer file written as an object.
type Sysprep struct {
	// GUIRunOnce lists commands run at the first user logon after customization.
	GUIRunOnce *SysprepGUIRunOnce `json:"guiRunOnce,omitempty"`

	// GUIUnattended sets the administrator password, automatic logon and time zone.
	GUIUnattended *SysprepGUIUnattended `json:"guiUnattended,omitempty"`

	// Identification says which workgroup or domain the computer joins.
	Identification *SysprepIdentification `json:"identification,omitempty"`

	// LicenseFilePrintData is the server licensing information (Windows 2000 and 2003 only).
	LicenseFilePrintData *SysprepLicenseFilePrintData `json:"licenseFilePrintData,omitempty"`

	// UserData identifies the owner of the computer.
	// +kubebuilder:validation:Required
	UserData SysprepUserData `json:"userData"`

	// ExpirePasswordAfterNextLogin forces the administrators to change their password at the next
	// login.
	ExpirePasswordAfterNextLogin bool `json:"expirePasswordAfterNextLogin,omitempty"`

	// ScriptText is a batch script run before and after customization, inline or from a Secret.
	ScriptText *ValueOrSecretKeySelector `json:"scriptText,omitempty"`
}

// SysprepGUIRunOnce lists commands run at the first user logon.
type SysprepGUIRunOnce struct {
	// Commands are the command lines, run in order.
	Commands []string `json:"commands,omitempty"`
}

// SysprepGUIUnattended holds the sysprep GuiUnattended settings.
type SysprepGUIUnattended struct {
	// AutoLogon logs on as Administrator automatically; needs a password and autoLogonCount.
	AutoLogon bool `json:"autoLogon,omitempty"`

	// AutoLogonCount is how many times Administrator is logged on automatically.
	AutoLogonCount int32 `json:"autoLogonCount,omitempty"`

	// Password is the Administrator password from a Secret; the key defaults to "password".
	Password *PasswordSecretKeySelector `json:"password,omitempty"`

	// TimeZone is the Windows time zone index; 85 is UTC.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=85
	TimeZone int32 `json:"timeZone,omitempty"`
}

// SysprepIdentification says which workgroup or domain a Windows guest joins.
type SysprepIdentification struct {
	// DomainAdmin is the account used to join the domain named by spec.network.domainName.
	DomainAdmin string `json:"domainAdmin,omitempty"`

	// DomainAdminPassword is that account's password from a Secret; the key defaults to
	// "domain_admin_password".
	DomainAdminPassword *DomainPasswordSecretKeySelector `json:"domainAdminPassword,omitempty"`

	// DomainOU is the LDAP path of the organizational unit the computer is put in.
	DomainOU string `json:"domainOU,omitempty"`

	// JoinWorkgroup is the workgroup to join instead of a domain.
	JoinWorkgroup string `json:"joinWorkgroup,omitempty"`
}

// DomainPasswordSecretKeySelector selects a domain join password stored in a Secret.
type DomainPasswordSecretKeySelector struct {
	// Name is the name of the Secret holding the password.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// Key is the key within the Secret that holds the password.
	// +kubebuilder:default=domain_admin_password
	Key string `json:"key,omitempty"`
}

// SysprepLicenseFilePrintData holds the server licensing mode.
type SysprepLicenseFilePrintData struct {
	// AutoMode is the licensing mode: perSeat or perServer.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=perSeat;perServer
	AutoMode string `json:"autoMode"`

	// AutoUsers is the number of client licenses, used with perServer.
	AutoUsers *int32 `json:"autoUsers,omitempty"`
}

// SysprepUserData identifies the owner of a Windows computer.
type SysprepUserData struct {
	// FullName is the owner's full name.
	// +kubebuilder:validation:Required
	FullName string `json:"fullName"`

	// OrgName is the owner's organization.
	// +kubebuilder:validation:Required
	OrgName string `json:"orgName"`

	// ProductID is the Windows product key from a Secret; the key defaults to "product_id".
	ProductID *ProductIDSecretKeySelector `json:"productID,omitempty"`
}

// ProductIDSecretKeySelector selects a Windows product key stored in a Secret.
type ProductIDSecretKeySelector struct {
	// Name is the name of the Secret holding the product key.
	// +kubebuilder:validation:Required
	Name string `json:"name"`

	// Key is the key within the Secret that holds the product key.
	// +kubebuilder:default=product_id
	Key string `json:"key,omitempty"`
}
