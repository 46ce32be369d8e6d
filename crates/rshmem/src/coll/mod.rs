//! Collectives, built on the ops layer. Each algorithm lives in its own file; `select`
//! (the decision tree) picks among them.

pub mod barrier;
