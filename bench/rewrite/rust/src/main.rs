//! rw-peer-rust: the rewrite benchmark's Rust peer (bench/rewrite/README.md).
//!
//!     rw-peer-rust regex|aho PLAN --write-out DIR PAGE...
//!     rw-peer-rust regex|aho PLAN --time S PAGE...
//!
//! PLAN is written by bench/rewrite/peers.py (plan_text): a line
//! `rwplan 1 N`, then per rule `lit|re<TAB>PATTERN-HEX<TAB>PARTS`, PARTS
//! comma-separated `=HEX` (bytes) and `$N` (the rule's group N), or "-".
//!
//! - `regex`: the `regex` crate's `bytes::Regex::replace_all` over each
//!   whole page, with one alternation of all the rules in order (leftmost
//!   first), compiled with `(?-u)` so that matching is on bytes as in the
//!   engine (`\d` is [0-9]). A set of literals is an alternation of the
//!   escaped strings and the replacement is looked up by the matched text
//!   (no capture groups, so the crate stays on its DFA); a set with
//!   regexes has one group per rule, and the first group that took part
//!   names the rule.
//! - `aho`: literal sets only: `aho-corasick` with MatchKind::LeftmostLongest
//!   (the engine's selection), a DFA, `replace_all_with_bytes`.
//!
//! --write-out writes each page's output to DIR/BASENAME. --time reads
//! the pages, builds the matcher, then rewrites all pages again and again
//! until S seconds have passed (at least twice: the first pass is a
//! warm-up) and prints {"bytes": N, "secs": [...]}: the wall time of each
//! pass.
//! Exit status 1 with a message for a set the method cannot run, 2 for
//! bad arguments or files.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::process::exit;
use std::time::Instant;

enum Part {
    Bytes(Vec<u8>),
    Group(usize),
}

struct Rule {
    regex: bool,
    pattern: Vec<u8>,
    parts: Vec<Part>,
}

fn fail(code: i32, msg: &str) -> ! {
    eprintln!("rw-peer-rust: {}", msg);
    exit(code)
}

fn unhex(s: &str) -> Vec<u8> {
    if s.len() % 2 != 0 {
        fail(2, &format!("bad hex {:?}", s));
    }
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or_else(|_| fail(2, &format!("bad hex {:?}", s))))
        .collect()
}

fn read_plan(path: &str) -> Vec<Rule> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| fail(2, &format!("{}: {}", path, e)));
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
    if head.len() != 3 || head[0] != "rwplan" || head[1] != "1" {
        fail(2, &format!("{}: not an rwplan 1 file", path));
    }
    let n: usize = head[2].parse().unwrap_or_else(|_| fail(2, &format!("{}: bad rule count", path)));
    let mut rules = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 3 || (f[0] != "lit" && f[0] != "re") {
            fail(2, &format!("{}: bad line {:?}", path, line));
        }
        let mut parts = Vec::new();
        if f[2] != "-" {
            for p in f[2].split(',') {
                if let Some(h) = p.strip_prefix('=') {
                    parts.push(Part::Bytes(unhex(h)));
                } else if let Some(g) = p.strip_prefix('$') {
                    parts.push(Part::Group(g.parse().unwrap_or_else(|_| fail(2, &format!("bad part {:?}", p)))));
                } else {
                    fail(2, &format!("{}: bad part {:?}", path, p));
                }
            }
        }
        rules.push(Rule { regex: f[0] == "re", pattern: unhex(f[1]), parts });
    }
    if rules.len() != n || n == 0 {
        fail(2, &format!("{}: {} rules, header says {}", path, rules.len(), n));
    }
    rules
}

/// Appends a rule's template: group g of the rule is group(base + g).
fn expand<'a>(parts: &[Part], group: impl Fn(usize) -> Option<&'a [u8]>, dst: &mut Vec<u8>) {
    for p in parts {
        match p {
            Part::Bytes(b) => dst.extend_from_slice(b),
            Part::Group(g) => {
                if let Some(m) = group(*g) {
                    dst.extend_from_slice(m)
                }
            }
        }
    }
}

trait Rewriter {
    fn rewrite(&self, page: &[u8]) -> Vec<u8>;
}

struct LitRegex {
    rx: regex::bytes::Regex,
    table: HashMap<Vec<u8>, usize>,
    rules: Vec<Rule>,
}

impl Rewriter for LitRegex {
    fn rewrite(&self, page: &[u8]) -> Vec<u8> {
        self.rx
            .replace_all(page, |c: &regex::bytes::Captures| {
                let m = c.get(0).unwrap().as_bytes();
                let mut out = Vec::new();
                expand(&self.rules[self.table[m]].parts, |_| Some(m), &mut out);
                out
            })
            .into_owned()
    }
}

struct AltRegex {
    rx: regex::bytes::Regex,
    base: Vec<usize>, // the outer group of each rule
    rules: Vec<Rule>,
}

impl Rewriter for AltRegex {
    fn rewrite(&self, page: &[u8]) -> Vec<u8> {
        self.rx
            .replace_all(page, |c: &regex::bytes::Captures| {
                let i = (0..self.base.len()).find(|&i| c.get(self.base[i]).is_some()).unwrap();
                let b = self.base[i];
                let mut out = Vec::new();
                expand(&self.rules[i].parts, |g| c.get(b + g).map(|m| m.as_bytes()), &mut out);
                out
            })
            .into_owned()
    }
}

struct Aho {
    ac: aho_corasick::AhoCorasick,
    rules: Vec<Rule>,
}

impl Rewriter for Aho {
    fn rewrite(&self, page: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(page.len() + page.len() / 8);
        self.ac.replace_all_with_bytes(page, &mut out, |m, matched, dst| {
            expand(&self.rules[m.pattern()].parts, |_| Some(matched), dst);
            true
        });
        out
    }
}

fn escape(p: &[u8]) -> String {
    // the engine's literals are bytes; the sets' are ASCII
    let s = std::str::from_utf8(p).unwrap_or_else(|_| fail(1, "regex: a literal that is not UTF-8"));
    regex::escape(s)
}

fn build(method: &str, rules: Vec<Rule>) -> Box<dyn Rewriter> {
    let all_lit = rules.iter().all(|r| !r.regex);
    let compile = |src: String| {
        regex::bytes::RegexBuilder::new(&src)
            .size_limit(1 << 30)
            .dfa_size_limit(1 << 30)
            .build()
            .unwrap_or_else(|e| fail(1, &format!("regex: {}", e)))
    };
    match method {
        "aho" => {
            if !all_lit {
                fail(1, "aho-corasick: literal sets only");
            }
            let ac = aho_corasick::AhoCorasickBuilder::new()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .dfa(true)
                .build(rules.iter().map(|r| r.pattern.clone()));
            Box::new(Aho { ac, rules })
        }
        "regex" if all_lit => {
            let src = rules.iter().map(|r| escape(&r.pattern)).collect::<Vec<_>>().join("|");
            let mut table = HashMap::new();
            for (i, r) in rules.iter().enumerate() {
                table.entry(r.pattern.clone()).or_insert(i);
            }
            Box::new(LitRegex { rx: compile(format!("(?-u){}", src)), table, rules })
        }
        "regex" => {
            let mut srcs = Vec::new();
            let mut base = Vec::new();
            let mut group = 1;
            for r in &rules {
                let body = if r.regex {
                    String::from_utf8(r.pattern.clone()).unwrap_or_else(|_| fail(1, "regex: a pattern that is not UTF-8"))
                } else {
                    escape(&r.pattern)
                };
                let groups = compile(format!("(?-u){}", body)).captures_len() - 1;
                srcs.push(format!("({})", body));
                base.push(group);
                group += 1 + groups;
            }
            Box::new(AltRegex { rx: compile(format!("(?-u){}", srcs.join("|"))), base, rules })
        }
        _ => fail(2, "the method is regex or aho"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: rw-peer-rust regex|aho PLAN (--write-out DIR | --time S) PAGE...";
    if args.len() < 6 {
        fail(2, usage);
    }
    let (method, plan, opt, val) = (&args[1], &args[2], &args[3], &args[4]);
    let pages: Vec<&String> = args[5..].iter().collect();
    let data: Vec<Vec<u8>> = pages
        .iter()
        .map(|p| fs::read(p).unwrap_or_else(|e| fail(2, &format!("{}: {}", p, e))))
        .collect();
    let rw = build(method, read_plan(plan));
    match opt.as_str() {
        "--write-out" => {
            for (p, d) in pages.iter().zip(&data) {
                let name = Path::new(p).file_name().unwrap_or_else(|| fail(2, "bad page path"));
                let out = Path::new(val).join(name);
                fs::write(&out, rw.rewrite(d)).unwrap_or_else(|e| fail(2, &format!("{}: {}", out.display(), e)));
            }
        }
        "--time" => {
            let budget: f64 = val.parse().unwrap_or_else(|_| fail(2, "--time wants a number of seconds"));
            if !(0.0..=3600.0).contains(&budget) {
                fail(2, "--time wants 0 to 3600 seconds");
            }
            let mut secs: Vec<f64> = Vec::new();
            let mut sink = 0usize;
            while secs.len() < 2 || secs.iter().sum::<f64>() < budget {
                let t0 = Instant::now();
                for d in &data {
                    sink += rw.rewrite(d).len();
                }
                secs.push(t0.elapsed().as_secs_f64());
            }
            let bytes: usize = data.iter().map(|d| d.len()).sum();
            let list: Vec<String> = secs.iter().map(|s| format!("{:.9}", s)).collect();
            println!("{{\"bytes\": {}, \"out_bytes\": {}, \"secs\": [{}]}}", bytes, sink / secs.len(), list.join(", "));
        }
        _ => fail(2, usage),
    }
}
