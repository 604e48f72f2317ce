//! `humanoid` command line: parse, run, map errors to an exit code.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    // A write past a file-size limit (or a full quota) is an error to report, not a signal
    // that kills the process mid-write.
    // SAFETY: setting a signal's disposition to "ignore" before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let args = <cli::Cli as clap::Parser>::parse();
    cli::init_tracing(args.verbose);
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            ExitCode::from(1)
        }
    }
}

/// The error and its causes joined by ": ", skipping a cause whose text the message already
/// holds (library errors name their OS error in their own message).
fn error_chain(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !msg.contains(&text) {
            if !msg.is_empty() {
                msg.push_str(": ");
            }
            msg.push_str(&text);
        }
    }
    msg
}
