//! `netsparse topo`: live topologies of network namespaces and veths.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use netsparse::topo::gen::{self, LeafSpineOptions};
use netsparse::topo::run::{self, UpOptions};
use netsparse::topo::spec::Topology;
use netsparse::topo::TopoError;

/// Arguments of `netsparse topo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub what: What,
}

/// `topo` sub-commands.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// Create the namespaces, links and processes of a topology file.
    Up(UpArgs),
    /// Remove exactly what `up` created (reads DIR/state.json; idempotent).
    Down(DownArgs),
    /// Generate a topology file.
    #[command(subcommand)]
    Gen(GenWhat),
    /// Gather a matrix's remote properties with the hosts' NIC endpoints.
    Gather(GatherArgs),
}

/// Arguments of `topo gather`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The topology must be up (`topo up`). The matrix is partitioned over the hosts\n\
with the simulator's 1D partition; each host's NIC endpoint (netsparse_nic on\n\
the host's interface, inside its namespace: one thread per host here) serves\n\
its property slice and gathers the column idxs of its rows' nonzeros in RIG\n\
commands. Every gathered property is checked against property_word. Switch\n\
counters come from SIGUSR1 dumps of stats.json before and after the gather;\n\
cache hits are the counters named *hits.\n\
\n\
Exit status: 0 all verified; 1 a command failed or a property is wrong; 2 errors.")]
pub struct GatherArgs {
    /// The topology file (or give --attach).
    #[arg(required_unless_present = "attach")]
    pub topology: Option<PathBuf>,
    /// Gather on endpoints listed in a JSON file instead of a `topo up` run
    /// (hosts: name, node, netns path, iface; switches: name, pid, stats
    /// file; nic_program; work_dir), e.g. Mininet hosts (examples/mininet).
    #[arg(long, value_name = "FILE", conflicts_with = "topology")]
    pub attach: Option<PathBuf>,
    /// The matrix (Matrix Market).
    #[arg(long, value_name = "FILE.mtx")]
    pub matrix: PathBuf,
    /// Property size in four-byte values.
    #[arg(long, default_value_t = 16)]
    pub k: u32,
    /// Idxs per RIG command.
    #[arg(long, default_value_t = 8192)]
    pub batch: u64,
    /// Run directory (default: TOPO.run next to the file).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// NIC program (default: the hosts' nic.program).
    #[arg(long, value_name = "FILE")]
    pub nic_program: Option<PathBuf>,
    /// NIC parameters (TOML, keys of netsparse_nic::NicConfig).
    #[arg(long, value_name = "FILE")]
    pub nic_config: Option<PathBuf>,
    /// Seconds before giving up.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Also write the report as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Gather on warm Property Caches: skip the invalidation over
    /// P4Runtime that otherwise runs first on every switch with a
    /// `grpc_addr` (every switch of `topo up`).
    #[arg(long)]
    pub keep_caches: bool,
}

/// Arguments of `topo up`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Needs root and iproute2. Every host and every switch gets its own network\n\
namespace (ns<id>-<name>), every link a veth pair (<id>-<node>-p<port>), every\n\
switch a `netsparse switch` process in its namespace. The run directory holds\n\
state.json (what exists, written before each step), and per switch its\n\
program.json, switch.log, stats.json (SIGUSR1 refreshes it) and pcap/.\n\
Enter a host with: ip netns exec ns<id>-h0 <command>.")]
pub struct UpArgs {
    /// The topology file (p4lang tutorials' topology.json shape).
    pub topology: PathBuf,
    /// Run directory (default: TOPO.run next to the file).
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Run id prefixed to every name (1-4 of [0-9a-z]; default: a fresh one).
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Seconds a process may take to report that it is running.
    #[arg(long, value_name = "S", default_value_t = 60)]
    pub ready_timeout: u64,
    /// Do not record the switch ports to pcap files (they cost time per
    /// frame; the forwarding benchmark runs without them).
    #[arg(long)]
    pub no_pcap: bool,
}

/// Arguments of `topo down`.
#[derive(clap::Args, Debug)]
pub struct DownArgs {
    /// A run directory, or the topology file (its default run directory).
    pub target: PathBuf,
}

/// Generators.
#[derive(clap::Subcommand, Debug)]
pub enum GenWhat {
    /// R racks of H hosts, each rack behind a ToR, every ToR linked to every
    /// spine; with --topology hyperx|dragonfly (alias `fabric`), Figure
    /// 22's networks with H hosts on every switch.
    #[command(visible_alias = "fabric")]
    LeafSpine(LeafSpineArgs),
}

/// Arguments of `topo gen leaf-spine`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Writes TOPO.json and one BMv2 command file per switch (TOPO-<switch>.txt) with\n\
the simulator's symmetric routing (rack pair A,B crosses spine (A+B) mod S).\n\
Hosts h<n> are NetSparse node n: 10.0.0.<n+1>/9, MAC 02:4e:53:00:00:<n>.")]
pub struct LeafSpineArgs {
    /// Racks (leaf-spine).
    #[arg(long, required_unless_present = "topology")]
    pub racks: Option<u32>,
    /// Hosts per rack (per switch with --topology hyperx or dragonfly).
    #[arg(long)]
    pub hosts: u32,
    /// The network, as `sim --topology` takes it: leaf-spine (default),
    /// hyperx[:DxDxD][,width=W] or dragonfly[:groups=G,switches=A,global=H].
    /// Every HyperX and Dragonfly switch is a "ToR" (it has hosts and runs
    /// the ToR program); --racks and --spines do not apply.
    #[arg(long, value_name = "SPEC")]
    pub topology: Option<netsparse::sim::topology::TopologySpec>,
    /// Spines (default: hosts per rack).
    #[arg(long)]
    pub spines: Option<u32>,
    /// Output file.
    #[arg(short = 'o', long, default_value = "topo.json")]
    pub output: PathBuf,
    /// The NetSparse rack: ToRs run PROGRAMS/netsparse_tor.p4, spines
    /// netsparse_spine.p4, hosts a netsparse_nic.p4 endpoint; tables
    /// node_port/ipv4_port and `cache_mode 4·K` (default: ipv4_forward.p4
    /// everywhere and no NIC).
    #[arg(long)]
    pub netsparse: bool,
    /// Where the bundled programs are (for --netsparse and the defaults).
    #[arg(long, value_name = "DIR", default_value = "programs")]
    pub programs: PathBuf,
    /// Property size in four-byte values, for the ToRs' cache mode (--netsparse).
    #[arg(long, default_value_t = 16)]
    pub k: u32,
    /// ToR program (default: PROGRAMS/ipv4_forward.p4, or netsparse_tor.p4).
    #[arg(long)]
    pub tor_program: Option<PathBuf>,
    /// Spine program (default: PROGRAMS/ipv4_forward.p4, or netsparse_spine.p4).
    #[arg(long)]
    pub spine_program: Option<PathBuf>,
    /// NIC program for every host (used by `topo gather`).
    #[arg(long)]
    pub nic_program: Option<PathBuf>,
    /// Switch shape TOML passed to the ToRs as --config.
    #[arg(long)]
    pub tor_config: Option<PathBuf>,
    /// Control-plane template per destination node (placeholders {node}
    /// {port} {ip} {mac} {switch}); default: the ipv4_forward.p4 route.
    #[arg(long)]
    pub node_template: Option<String>,
    /// Control-plane template per destination IPv4 address.
    #[arg(long)]
    pub ipv4_template: Option<String>,
    /// Link MTU (up to 9000).
    #[arg(long, default_value_t = 1500)]
    pub mtu: u32,
}

/// Run `topo`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Up(a) => up(a),
        What::Down(a) => down(a),
        What::Gen(GenWhat::LeafSpine(a)) => gen_leaf_spine(a),
        What::Gather(a) => gather(a),
    }
}

fn gather(a: GatherArgs) -> anyhow::Result<ExitCode> {
    use anyhow::Context as _;
    use netsparse::topo::gather::Endpoints;
    let eps = match (&a.topology, &a.attach) {
        (_, Some(f)) => Endpoints::read(f),
        (Some(t), None) => Topology::read(t).and_then(|topo| {
            let dir = a
                .run_dir
                .clone()
                .unwrap_or_else(|| run::default_run_dir(&topo.file));
            Endpoints::from_run(&topo, &dir)
        }),
        (None, None) => anyhow::bail!("give TOPO.json or --attach FILE"),
    };
    let eps = match eps {
        Ok(e) => e,
        Err(e) => return Ok(fail(&e)),
    };
    let f = std::fs::File::open(&a.matrix)
        .with_context(|| format!("cannot open {}", a.matrix.display()))?;
    let (m, _) = match netsparse::sim::matrix::mtx::read_mtx(
        std::io::BufReader::new(f),
        netsparse::sim::matrix::ReadOptions { values: false },
    ) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {}: {e}", a.matrix.display());
            return Ok(ExitCode::from(1));
        }
    };
    let mut opts = netsparse::topo::gather::GatherOptions {
        k: a.k,
        batch: a.batch,
        nic_program: a.nic_program,
        timeout: Duration::from_secs(a.timeout),
        invalidate_caches: !a.keep_caches,
        ..Default::default()
    };
    if let Some(c) = &a.nic_config {
        let text =
            std::fs::read_to_string(c).with_context(|| format!("cannot read {}", c.display()))?;
        opts.nic_config = match toml::from_str(&text) {
            Ok(cfg) => cfg,
            Err(e) => {
                eprintln!("error: {}: bad NIC config: {e}", c.display());
                return Ok(ExitCode::from(1));
            }
        };
    }
    let rep = match netsparse::topo::gather::gather_on(&eps, &m, &opts) {
        Ok(r) => r,
        Err(e) => return Ok(fail(&e)),
    };
    print!("{}", rep.render());
    if let Some(j) = &a.json {
        std::fs::write(j, serde_json::to_string_pretty(&rep)?)
            .with_context(|| format!("cannot write {}", j.display()))?;
    }
    Ok(if rep.ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: the gather failed or gathered wrong properties");
        ExitCode::from(1)
    })
}

/// Exit 1 for bad input, 2 for environment and I/O failures.
fn fail(e: &TopoError) -> ExitCode {
    eprintln!("error: {e}");
    match e {
        TopoError::Json { .. }
        | TopoError::Schema { .. }
        | TopoError::UnknownNode { .. }
        | TopoError::DuplicatePort { .. }
        | TopoError::MissingFile { .. }
        | TopoError::Program { .. }
        | TopoError::Exists { .. }
        | TopoError::Name { .. } => ExitCode::from(1),
        _ => ExitCode::from(2),
    }
}

fn up(a: UpArgs) -> anyhow::Result<ExitCode> {
    let topo = match Topology::read(&a.topology) {
        Ok(t) => t,
        Err(e) => return Ok(fail(&e)),
    };
    let exe = std::env::current_exe()?;
    let opts = UpOptions {
        run_dir: a.run_dir,
        run_id: a.run_id,
        ready_timeout: Duration::from_secs(a.ready_timeout),
        pcap: !a.no_pcap,
        ..UpOptions::new(exe)
    };
    match run::up(&topo, &opts) {
        Ok((st, dir)) => {
            println!("run {} is up; run directory {}", st.run_id, dir.display());
            for (name, n) in &st.plan.nodes {
                let ifs: Vec<String> = n.ifaces.iter().map(|(p, i)| format!("{p}@{i}")).collect();
                println!(
                    "  {name:<10} {:<6} netns {:<16} {}",
                    n.kind,
                    n.netns,
                    ifs.join(" ")
                );
            }
            println!("stop it with: netsparse topo down {}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(fail(&e)),
    }
}

fn down(a: DownArgs) -> anyhow::Result<ExitCode> {
    let dir = run::run_dir_of(&a.target);
    match run::down(&dir) {
        Ok(r) => {
            println!(
                "{}: stopped {} processes, removed {} links and {} namespaces",
                dir.display(),
                r.processes,
                r.links,
                r.namespaces
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(fail(&e)),
    }
}

fn gen_leaf_spine(a: LeafSpineArgs) -> anyhow::Result<ExitCode> {
    let templates = if a.node_template.is_some() || a.ipv4_template.is_some() {
        netsparse::sim::topology::TableTemplates {
            node: a.node_template,
            ipv4: a.ipv4_template,
            flow: None,
            pr: None,
        }
    } else if a.netsparse {
        gen::netsparse_templates()
    } else {
        gen::ipv4_forward_templates()
    };
    let p = |name: &str| a.programs.join(name);
    let (tor, spine, nic, extra) = if a.netsparse {
        (
            p("netsparse_tor.p4"),
            p("netsparse_spine.p4"),
            Some(a.nic_program.unwrap_or_else(|| p("netsparse_nic.p4"))),
            vec![format!("cache_mode {}", u64::from(a.k) * 4)],
        )
    } else {
        (
            p("ipv4_forward.p4"),
            p("ipv4_forward.p4"),
            a.nic_program,
            Vec::new(),
        )
    };
    let opts = LeafSpineOptions {
        racks: a.racks.unwrap_or(1),
        topology: a.topology.unwrap_or_default(),
        hosts: a.hosts,
        spines: a.spines,
        tor_program: a.tor_program.unwrap_or(tor),
        spine_program: a.spine_program.unwrap_or(spine),
        nic_program: nic,
        templates,
        tor_config: a.tor_config,
        mtu: a.mtu,
        tor_extra: extra,
    };
    match gen::leaf_spine(&opts, &a.output) {
        Ok(files) => {
            for f in files {
                println!("wrote {}", f.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(fail(&e)),
    }
}
