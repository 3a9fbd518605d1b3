package vcenter

// ConnectAt and LoginRESTAt let tests drive the re-login backoff with their own clock.
var (
	ConnectAt   = connect
	LoginRESTAt = loginREST
)
