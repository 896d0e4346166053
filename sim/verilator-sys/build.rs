//! Verilates every `hw/generated/<top>.v` that has a port manifest
//! `hw/generated/<top>.ports` (plus the self-test model in `fixtures/`), each
//! as its own model type `verilator_sys::<top>::Model`, and links them with
//! one shared Verilator runtime.
//!
//! * Models and the runtime are built in parallel (one thread each; the C++
//!   files of one model compile in parallel through `cc`'s jobserver).
//! * Each model is rebuilt only when its key changes (hash of its `.v`,
//!   `.ports`, `csrc/vmodel.h`, the Verilator version and the flags); the
//!   runtime only when the Verilator version or the flags change. Both are
//!   kept in `<target>/<profile dir>/verilator-sys/`, shared by the dev and
//!   test profiles (clippy and the tests build each model once).
//! * The script reruns when anything in `hw/generated/`, `fixtures/` or
//!   `csrc/` changes (a new model appears by adding its two files).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bump when the generated C++ or the build flags change shape.
const GEN_VERSION: &str = "vsys-gen-3";
const CXX_FLAGS_DESC: &str = "c++17 -O3 VM_TRACE VM_TRACE_VCD";
const VERILATOR_ARGS: &[&str] = &[
    "--cc",
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "--trace",
];

struct Port {
    output: bool,
    name: String,
    width: usize,
}

struct Top {
    name: String,
    verilog: PathBuf,
    manifest_text: String,
    ports: Vec<Port>,
}

const RUST_KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_lowercase() || f == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !RUST_KEYWORDS.contains(&s)
}

fn parse_manifest(file: &Path, text: &str) -> Vec<Port> {
    let mut ports = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let bad = || -> ! {
            panic!(
                "{} line {}: `{line}`: expected `in|out <name> <width>`",
                file.display(),
                n + 1
            )
        };
        if f.len() != 3 {
            bad();
        }
        let output = match f[0] {
            "in" => false,
            "out" => true,
            _ => bad(),
        };
        let width: usize = f[2].parse().unwrap_or_else(|_| bad());
        if width == 0 || !f[1].chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            bad();
        }
        ports.push(Port {
            output,
            name: f[1].to_string(),
            width,
        });
    }
    for need in ["clock", "reset"] {
        if !ports
            .iter()
            .any(|p| p.name == need && !p.output && p.width == 1)
        {
            panic!("{}: a model needs a 1-bit input `{need}`", file.display());
        }
    }
    ports
}

/// Every `<top>.v` in `dir` with a `<top>.ports` next to it, sorted by name.
fn discover(dir: &Path) -> Vec<Top> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut tops = Vec::new();
    for e in rd {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "v") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let manifest = path.with_extension("ports");
        // A `.v` without a manifest is not a model of this crate: the board
        // top (`rnic_versa5g.v`) is built by `sim/verilator-board` with its
        // own shim. Skipped without a cargo warning, which would show on
        // every build of every crate that depends on this one.
        let Ok(manifest_text) = fs::read_to_string(&manifest) else {
            continue;
        };
        if !is_ident(&name) {
            panic!(
                "{}: the top's name `{name}` must be a lower-case Rust identifier \
                 (it becomes the module `verilator_sys::{name}`)",
                path.display()
            );
        }
        let ports = parse_manifest(&manifest, &manifest_text);
        tops.push(Top {
            name,
            verilog: path,
            manifest_text,
            ports,
        });
    }
    tops.sort_by(|a, b| a.name.cmp(&b.name));
    tops
}

fn verilator_missing(what: &str) -> ! {
    panic!(
        "\n\nverilator-sys: {what}.\nVerilator (5.x) is needed to build the RTL model: \
         run `make deps`, or `apt-get install verilator`.\n\n"
    )
}

/// FNV-1a 64 over the parts (with lengths, so boundaries count).
fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in (p.len() as u64).to_le_bytes().iter().chain(p.iter()) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The per-model C++ shim: fixed functions plus one accessor per port,
/// inputs masked to their width.
fn gen_cpp(top: &Top) -> String {
    let t = &top.name;
    let mut s = format!(
        "// Generated by verilator-sys/build.rs from {t}.ports.\n\
         #include \"V{t}.h\"\n\
         #include \"vmodel.h\"\n\
         typedef VModel<V{t}> M;\n\
         // Read by the patched `_eval` (see csrc/vmodel.h and `patch_ico_skip`).\n\
         thread_local bool vsys_skip_ico_{t} = false;\n\
         extern \"C\" {{\n\
         M* vrnic_{t}_new(void) {{ return vmodel_new<V{t}>(\"{t}\"); }}\n\
         void vrnic_{t}_free(M* m) {{ vmodel_free(m); }}\n\
         void vrnic_{t}_eval(M* m) {{ vmodel_eval(m, vsys_skip_ico_{t}); }}\n\
         void vrnic_{t}_tick(M* m) {{ vmodel_tick(m, vsys_skip_ico_{t}); }}\n\
         void vrnic_{t}_ticks(M* m, uint64_t n) {{ for (uint64_t i = 0; i < n; i++) vmodel_tick(m, vsys_skip_ico_{t}); }}\n\
         uint64_t vrnic_{t}_cycle(const M* m) {{ return m->cycle; }}\n\
         int vrnic_{t}_vcd_open(M* m, const char* path) {{ return vmodel_vcd_open(m, path); }}\n\
         void vrnic_{t}_vcd_flush(M* m) {{ if (m->vcd != nullptr) m->vcd->flush(); }}\n\
         void vrnic_{t}_vcd_close(M* m) {{ vmodel_vcd_close(m); }}\n"
    );
    for p in &top.ports {
        let n = &p.name;
        if p.width <= 64 {
            let mask = if p.width == 64 {
                "~0ULL".to_string()
            } else {
                format!("((1ULL << {}) - 1)", p.width)
            };
            writeln!(
                s,
                "uint64_t vrnic_{t}_get_{n}(const M* m) {{ return (uint64_t)m->top->{n}; }}"
            )
            .unwrap();
            if !p.output {
                writeln!(
                    s,
                    "void vrnic_{t}_set_{n}(M* m, uint64_t v) {{ v &= {mask}; if ((uint64_t)m->top->{n} != v) {{ m->top->{n} = v; m->dirty = true; }} }}"
                )
                .unwrap();
            }
        } else {
            let words = p.width.div_ceil(32);
            let top_bits = p.width - 32 * (words - 1);
            let top_mask = if top_bits == 32 {
                "0xFFFFFFFFu".to_string()
            } else {
                format!("((1u << {top_bits}) - 1)")
            };
            writeln!(s, "void vrnic_{t}_get_{n}(const M* m, uint32_t* w) {{ for (int i = 0; i < {words}; i++) w[i] = m->top->{n}[i]; }}").unwrap();
            if !p.output {
                writeln!(s, "void vrnic_{t}_set_{n}(M* m, const uint32_t* w) {{ for (int i = 0; i < {words}; i++) {{ uint32_t v = i == {last} ? w[i] & {top_mask} : w[i]; if (m->top->{n}[i] != v) {{ m->top->{n}[i] = v; m->dirty = true; }} }} }}", last = words - 1).unwrap();
            }
        }
    }
    s.push_str("}\n");
    s
}

/// The Rust module of one model: FFI declarations (under their
/// `vrnic_<top>_*` link names), the common `Model` (macro in `lib.rs`), one
/// accessor per port, by-name access and the port table.
fn gen_rust(top: &Top) -> String {
    let t = &top.name;
    let mut ext =
        String::from("    mod ffi {\n        use crate::RawModel;\n        extern \"C\" {\n");
    let fixed: &[(&str, &str)] = &[
        ("new", "() -> *mut RawModel"),
        ("free", "(m: *mut RawModel)"),
        ("eval", "(m: *mut RawModel)"),
        ("tick", "(m: *mut RawModel)"),
        ("ticks", "(m: *mut RawModel, n: u64)"),
        ("cycle", "(m: *const RawModel) -> u64"),
        (
            "vcd_open",
            "(m: *mut RawModel, path: *const std::os::raw::c_char) -> i32",
        ),
        ("vcd_flush", "(m: *mut RawModel)"),
        ("vcd_close", "(m: *mut RawModel)"),
    ];
    for (f, sig) in fixed {
        writeln!(
            ext,
            "            #[link_name = \"vrnic_{t}_{f}\"]\n            pub fn {f}{sig};"
        )
        .unwrap();
    }
    let mut acc = String::from("    impl Model {\n");
    let mut get_arms = String::new();
    let mut set_arms = String::new();
    let mut table = String::from(
        "    /// Every top-level port: (name, is_output, width), in manifest order.\n    pub const PORTS: &[(&str, bool, usize)] = &[\n",
    );
    for p in &top.ports {
        let n = &p.name;
        let w = p.width;
        writeln!(table, "        (\"{n}\", {}, {w}),", p.output).unwrap();
        let s = if w == 1 { "" } else { "s" };
        if n == "clock" {
            // Driven only by `tick`.
            continue;
        }
        if p.width <= 64 {
            writeln!(
                ext,
                "            #[link_name = \"vrnic_{t}_get_{n}\"]\n            pub fn get_{n}(m: *const RawModel) -> u64;"
            )
            .unwrap();
            if !p.output {
                writeln!(
                    ext,
                    "            #[link_name = \"vrnic_{t}_set_{n}\"]\n            pub fn set_{n}(m: *mut RawModel, v: u64);"
                )
                .unwrap();
            }
        } else {
            writeln!(
                ext,
                "            #[link_name = \"vrnic_{t}_get_{n}\"]\n            pub fn get_{n}(m: *const RawModel, w: *mut u32);"
            )
            .unwrap();
            if !p.output {
                writeln!(
                    ext,
                    "            #[link_name = \"vrnic_{t}_set_{n}\"]\n            pub fn set_{n}(m: *mut RawModel, w: *const u32);"
                )
                .unwrap();
            }
        }
        if w <= 64 {
            writeln!(get_arms, "                \"{n}\" => Some(self.get_{n}()),").unwrap();
            let kind = if p.output {
                "Output"
            } else {
                "Input (read back)"
            };
            writeln!(acc, "        /// {kind} `{n}` ({w} bit{s}).\n        #[inline]\n        pub fn get_{n}(&self) -> u64 {{\n            // SAFETY: `self.raw` is a live model owned by `self` (see `Model::new`).\n            unsafe {{ ffi::get_{n}(self.raw.as_ptr()) }}\n        }}").unwrap();
            if !p.output {
                writeln!(set_arms, "                \"{n}\" => self.set_{n}(v),").unwrap();
                writeln!(acc, "        /// Input `{n}` ({w} bit{s}); bits above the width are ignored.\n        #[inline]\n        pub fn set_{n}(&mut self, v: u64) {{\n            // SAFETY: `self.raw` is a live model owned by `self` (see `Model::new`).\n            unsafe {{ ffi::set_{n}(self.raw.as_ptr(), v) }}\n        }}").unwrap();
            }
        } else {
            let words = w.div_ceil(32);
            writeln!(acc, "        /// Port `{n}` ({w} bits) as {words} little-endian 32-bit words.\n        pub fn get_{n}(&self) -> [u32; {words}] {{\n            let mut v = [0u32; {words}];\n            // SAFETY: live model; `v` has room for the {words} words written.\n            unsafe {{ ffi::get_{n}(self.raw.as_ptr(), v.as_mut_ptr()) }};\n            v\n        }}").unwrap();
            if !p.output {
                writeln!(acc, "        /// Input `{n}` ({w} bits) as {words} little-endian 32-bit words; bits above the width are ignored.\n        pub fn set_{n}(&mut self, v: &[u32; {words}]) {{\n            // SAFETY: live model; `v` holds the {words} words read.\n            unsafe {{ ffi::set_{n}(self.raw.as_ptr(), v.as_ptr()) }}\n        }}").unwrap();
            }
        }
    }
    writeln!(
        acc,
        "        /// A port of at most 64 bits by name (`None` for unknown, `clock` and wider ports).\n        \
         pub fn get(&self, port: &str) -> Option<u64> {{\n            match port {{\n{get_arms}                _ => None,\n            }}\n        }}\n        \
         /// Sets an input of at most 64 bits by name; `false` if there is no such input.\n        \
         pub fn set(&mut self, port: &str, v: u64) -> bool {{\n            match port {{\n{set_arms}                _ => return false,\n            }}\n            true\n        }}"
    )
    .unwrap();
    ext.push_str("        }\n    }\n");
    acc.push_str("    }\n");
    table.push_str("    ];\n");
    format!(
        "/// The Verilated `{t}` (from `{t}.v` and its manifest `{t}.ports`).\npub mod {t} {{\n{ext}\n    crate::define_model!(\"{t}\");\n\n{acc}\n{table}}}\n"
    )
}

struct Ctx {
    verilator: String,
    include: PathBuf,
    csrc: PathBuf,
    version: String,
}

fn base_build(ctx: &Ctx, out_dir: &Path) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++17")
        // -O3, not -O2: GCC then inlines Verilator's `_vl_insert_WW` into the
        // generated code, where wide shifts by constant amounts (the TX
        // headers are built with them) fold; with -O2 it stayed a call, 12 %
        // of a co-simulation's instructions. Same compile time.
        .opt_level(3)
        .debug(false)
        .warnings(false)
        .cargo_metadata(false)
        .out_dir(out_dir)
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-sign-compare")
        .define("VM_TRACE", "1")
        .define("VM_TRACE_VCD", "1")
        .include(&ctx.csrc)
        .include(&ctx.include)
        .include(ctx.include.join("vltstd"));
    b
}

/// Makes the generated `V<top>___024root___eval` skip its
/// input-combinational ("ico") region while the shim's thread-local
/// `vsys_skip_ico_<top>` is set (csrc/vmodel.h sets it only for an
/// evaluation with no input changed since the previous one, where that
/// region would recompute the values the signals already hold). Returns
/// `false`, leaving the files as they are, when the function is not in the
/// shape Verilator 5.0 gives it.
fn patch_ico_skip(files: &[PathBuf], top: &str) -> Result<bool, String> {
    let head = format!("void V{top}___024root___eval(V{top}___024root* vlSelf) {{\n");
    let old = "    vlSelf->__VicoIterCount = 0U;\n    __VicoContinue = 1U;\n";
    let new =
        format!("    vlSelf->__VicoIterCount = 0U;\n    __VicoContinue = !vsys_skip_ico_{top};\n");
    for f in files {
        let text = fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let Some(at) = text.find(&head) else {
            continue;
        };
        let end = at + text[at..].find("\n}\n").unwrap_or(text.len() - at);
        let body = &text[at..end];
        if body.matches(old).count() != 1 {
            return Ok(false);
        }
        let patched = format!(
            "{}extern thread_local bool vsys_skip_ico_{top};\n{}{}",
            &text[..at],
            body.replace(old, &new),
            &text[end..]
        );
        fs::write(f, patched).map_err(|e| format!("{}: {e}", f.display()))?;
        return Ok(true);
    }
    Ok(false)
}

/// Verilates and compiles one model into `dir/libvm_<top>.a` unless its
/// stamp says it is current. Returns whether it was rebuilt.
fn build_model(ctx: &Ctx, top: &Top, dir: &Path, vmodel_h: &[u8]) -> Result<bool, String> {
    let verilog = fs::read(&top.verilog).map_err(|e| format!("{}: {e}", top.verilog.display()))?;
    let key = format!(
        "{:016x}",
        fnv(&[
            GEN_VERSION.as_bytes(),
            ctx.version.as_bytes(),
            CXX_FLAGS_DESC.as_bytes(),
            VERILATOR_ARGS.join(" ").as_bytes(),
            top.name.as_bytes(),
            &verilog,
            top.manifest_text.as_bytes(),
            vmodel_h,
        ])
    );
    let stamp = dir.join("stamp");
    let lib = dir.join(format!("libvm_{}.a", top.name));
    if fs::read_to_string(&stamp).ok().as_deref() == Some(key.as_str()) && lib.exists() {
        return Ok(false);
    }
    let _ = fs::remove_file(&stamp);
    let mdir = dir.join("vobj");
    let _ = fs::remove_dir_all(&mdir);
    fs::create_dir_all(&mdir).map_err(|e| e.to_string())?;
    let prefix = format!("V{}", top.name);
    let status = Command::new(&ctx.verilator)
        .args(VERILATOR_ARGS)
        .args(["--top-module", &top.name, "--prefix", &prefix, "--Mdir"])
        .arg(&mdir)
        .arg(&top.verilog)
        .status()
        .map_err(|e| format!("`verilator` could not be run: {e}"))?;
    if !status.success() {
        return Err(format!("verilator failed on {}", top.verilog.display()));
    }
    let mut generated: Vec<PathBuf> = fs::read_dir(&mdir)
        .map_err(|e| e.to_string())?
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    generated.sort();
    if !patch_ico_skip(&generated, &top.name)? {
        println!(
            "cargo:warning=verilator-sys: {}: the generated `_eval` has an unknown shape \
             (Verilator {}); every evaluation runs its input-combinational region (slower, \
             same results)",
            top.name, ctx.version
        );
    }
    let shim = dir.join(format!("shim_{}.cpp", top.name));
    fs::write(&shim, gen_cpp(top)).map_err(|e| e.to_string())?;
    let mut b = base_build(ctx, dir);
    b.include(&mdir).files(&generated).file(&shim);
    b.try_compile(&format!("vm_{}", top.name))
        .map_err(|e| format!("compiling the {} model: {e}", top.name))?;
    fs::write(&stamp, key).map_err(|e| e.to_string())?;
    Ok(true)
}

/// The Verilator runtime does not depend on the design: build it once per
/// Verilator installation and flags (verilated.cpp alone takes ~7 s).
fn build_runtime(ctx: &Ctx, dir: &Path) -> Result<bool, String> {
    let key = format!("{}|{}|{CXX_FLAGS_DESC}", ctx.version, ctx.include.display());
    let stamp = dir.join("stamp");
    if fs::read_to_string(&stamp).ok().as_deref() == Some(key.as_str())
        && dir.join("libvruntime.a").exists()
    {
        return Ok(false);
    }
    let _ = fs::remove_file(&stamp);
    let mut rt = base_build(ctx, dir);
    rt.file(ctx.include.join("verilated.cpp"))
        .file(ctx.include.join("verilated_vcd_c.cpp"))
        .file(ctx.include.join("verilated_threads.cpp"));
    rt.try_compile("vruntime")
        .map_err(|e| format!("compiling the Verilator runtime: {e}"))?;
    fs::write(&stamp, key).map_err(|e| e.to_string())?;
    Ok(true)
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let gen_dir = manifest_dir.join("../../hw/generated");
    let fixtures = manifest_dir.join("fixtures");
    let csrc = manifest_dir.join("csrc");
    for p in [&gen_dir, &fixtures, &csrc] {
        // A directory: cargo reruns when any file in it changes or appears.
        println!("cargo:rerun-if-changed={}", p.display());
    }
    println!("cargo:rerun-if-env-changed=VERILATOR");

    let mut tops = discover(&gen_dir);
    if !tops.iter().any(|t| t.name == "rnic_core") {
        panic!(
            "{}: no rnic_core.v with rnic_core.ports (run `cargo run -p rnic-hw --bin rnic-hw-gen`)",
            gen_dir.display()
        );
    }
    for f in discover(&fixtures) {
        if tops.iter().any(|t| t.name == f.name) {
            panic!(
                "fixture `{}` clashes with hw/generated/{}.v",
                f.name, f.name
            );
        }
        tops.push(f);
    }

    let mut rust = String::from("// Generated by verilator-sys/build.rs: one module per model.\n");
    for t in &tops {
        rust.push_str(&gen_rust(t));
    }
    rust.push_str("/// The models built, by top name.\npub const MODELS: &[&str] = &[");
    for t in &tops {
        write!(rust, "\"{}\", ", t.name).unwrap();
    }
    rust.push_str("];\n");
    let models_rs = out.join("models.rs");
    if fs::read_to_string(&models_rs).ok().as_deref() != Some(rust.as_str()) {
        fs::write(&models_rs, rust).unwrap();
    }

    let verilator = env::var("VERILATOR").unwrap_or_else(|_| "verilator".into());
    let root = match Command::new(&verilator)
        .args(["--getenv", "VERILATOR_ROOT"])
        .output()
    {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        Ok(_) => verilator_missing("`verilator --getenv VERILATOR_ROOT` failed"),
        Err(_) => verilator_missing("`verilator` was not found on PATH"),
    };
    let include = root.join("include");
    if !include.join("verilated.cpp").exists() {
        verilator_missing(&format!("{} has no verilated.cpp", include.display()));
    }
    let version = Command::new(&verilator)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let ctx = Ctx {
        verilator,
        include,
        csrc: csrc.clone(),
        version,
    };
    let vmodel_h = fs::read(csrc.join("vmodel.h")).expect("csrc/vmodel.h");

    // The models and the runtime do not depend on the Rust profile (fixed
    // C++ flags, keyed stamps), so they live next to the profile directory's
    // build outputs instead of in OUT_DIR: `cargo clippy` (dev profile) and
    // `cargo test` (test profile) then share one build of each model instead
    // of compiling every model twice. OUT_DIR is
    // <target>/<dir>/build/<pkg>-<hash>/out; the cache is
    // <target>/<dir>/verilator-sys/. Cargo holds the build directory's lock
    // while a build script runs, so two build scripts never share it at once.
    let cache = out
        .ancestors()
        .nth(3)
        .map(|p| p.join("verilator-sys"))
        .unwrap_or_else(|| out.clone());
    let rt_dir = cache.join("runtime");
    let model_dirs: Vec<PathBuf> = tops
        .iter()
        .map(|t| cache.join("models").join(&t.name))
        .collect();
    for d in model_dirs.iter().chain([&rt_dir]) {
        fs::create_dir_all(d).unwrap();
    }
    let mut errors = Vec::new();
    std::thread::scope(|s| {
        let rt = s.spawn(|| build_runtime(&ctx, &rt_dir));
        let models: Vec<_> = tops
            .iter()
            .zip(&model_dirs)
            .map(|(t, d)| {
                let (ctx, vh) = (&ctx, &vmodel_h);
                s.spawn(move || build_model(ctx, t, d, vh))
            })
            .collect();
        for (t, h) in tops.iter().zip(models) {
            match h.join() {
                Ok(Ok(rebuilt)) => {
                    if rebuilt {
                        eprintln!("verilator-sys: built model {}", t.name);
                    }
                }
                Ok(Err(e)) => errors.push(e),
                Err(_) => errors.push(format!("building {} panicked", t.name)),
            }
        }
        match rt.join() {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push("building the runtime panicked".into()),
        }
    });
    if !errors.is_empty() {
        panic!("verilator-sys:\n{}", errors.join("\n"));
    }

    // Static link order: the models, then the runtime they use.
    for (t, d) in tops.iter().zip(&model_dirs) {
        println!("cargo:rustc-link-search=native={}", d.display());
        println!("cargo:rustc-link-lib=static=vm_{}", t.name);
    }
    println!("cargo:rustc-link-search=native={}", rt_dir.display());
    println!("cargo:rustc-link-lib=static=vruntime");
    println!("cargo:rustc-link-lib=stdc++");
    println!("cargo:rustc-link-lib=pthread");
}
