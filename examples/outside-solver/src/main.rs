//! The solverlab command line with one more solver family, `kind = "pbd"` ([`pbd`]): every
//! command (`simulate`, `run`, `plot`, `report`, `merge`, `solver list`) knows it, and an
//! experiment file names it like any builtin.
//!
//! ```sh
//! cargo run --release -- solver list
//! cargo run --release -- simulate --scene chain --solver pbd-k05 --out OUT
//! cargo run --release -- run pbd_cloth.toml --out OUT
//! cargo run --release -- run ../../experiments/quickstart.toml --out OUT
//! ```

mod pbd;

fn main() -> std::process::ExitCode {
    solverlab_cli::main_with(solverlab_solvers::Registry::builtin().with(pbd::family()))
}
