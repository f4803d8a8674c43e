//! The application shell: the one route table of every listener ([`routes`]),
//! serving and shutdown ([`serve`]), the operational endpoints ([`ops`]) and the
//! minute flush of the service-level counts ([`slis`]). Nothing
//! but the command line and the benchmarks depends on this module; the state every
//! handler shares is `crate::state`, below the features.

pub mod ops;
pub mod routes;
pub mod scrape;
pub mod serve;
pub mod slis;
