//! Who is calling: users, passwords, the credentials we issue (access JWTs, refresh
//! and hook tokens), sign-ins, throttling, the device flow, GitHub sign-in, and the
//! extractors that turn a request's credentials into a user.
//!
//! Token kinds are never interchangeable: access tokens (EdDSA JWT, 8 h) for the web
//! and API, refresh tokens (opaque, 90 d, rotated) only at `/oauth/token`, hook tokens
//! (opaque, 365 d) only on ingest routes.

pub mod device;
pub mod jwt;
pub mod passwords;
pub mod signins;
pub mod throttle;
pub mod tokens;
pub mod users;
