//! The application shell: the state every handler shares ([`state`]), the one route
//! table of every listener ([`routes`]), serving and shutdown ([`serve`]), and the
//! operational endpoints ([`ops`]). Features depend on `AppState` only; nothing but the
//! command line depends on the rest of this module.

pub mod ops;
pub mod routes;
pub mod serve;
pub mod state;

pub use state::AppState;
