//! The `solverlab` command: the command line of [`solverlab_cli`] with solverlab's own solver
//! families. An outside crate that adds a family writes the same three lines with its registry
//! (see `examples/outside-solver`).

fn main() -> std::process::ExitCode {
    solverlab_cli::main_with(solverlab_solvers::Registry::builtin())
}
