//! `netsparse explain CODE`.

use std::process::ExitCode;

use anyhow::bail;

/// Arguments of `netsparse explain`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The error code, e.g. E0101. Without one, lists every code.
    pub code: Option<String>,
}

/// Print the explanation of one code, or the list of codes.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    use netsparse_compiler::diag;
    match args.code {
        None => {
            for code in diag::codes() {
                let title = diag::explain(code)
                    .and_then(|t| t.lines().next())
                    .unwrap_or("")
                    .trim_start_matches('#')
                    .trim();
                println!("{title}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(code) => match diag::explain(&code) {
            Some(text) => {
                print!("{text}");
                Ok(ExitCode::SUCCESS)
            }
            None => bail!("no explanation for {code:?}; `netsparse explain` lists the known codes"),
        },
    }
}
