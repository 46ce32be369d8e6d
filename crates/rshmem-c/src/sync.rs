//! Barriers and syncs over the world and over teams (`barrier_all`, `sync_all`; the team
//! form `team_sync` lives with the teams).

use crate::routine::Routine;
use crate::state::{rt, OrExit};

c_fn!(barrier_all, "barrier_all"; fn () = |call| rt(call).barrier_all().or_exit(call));
c_fn!(sync_all, "sync_all"; fn () = |call| rt(call).sync_all().or_exit(call));

/// The routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] = routines![barrier_all, sync_all];
