//! The OAuth vocabulary the hook CLI and the server share (RFC 8628 device flow):
//! the CLI's client id and the device-code grant type.

/// The client id the hook CLI signs in with.
pub const CLIENT_ID: &str = "sightline-cli";

/// The grant type of a device-code token request (RFC 8628 §3.4).
pub const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
