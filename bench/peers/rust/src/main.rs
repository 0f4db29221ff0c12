//! classify-bench-rust: the Rust peer of the classification benchmark
//! (bench/README.md): the `default` and `ai_robots` checks as a Rust
//! programmer writes them with the crates iocaine's matchers are built on.
//!
//!     classify-bench-rust REQUESTS --peerdata PEERDATA.txt
//!         --program ai_robots|default (--verdicts FILE | --time SECONDS [--threads 1] | --stats)
//!
//! The User-Agent is scanned twice, once per engine: one aho-corasick
//! automaton (ASCII-caseless, overlapping) with every literal of the
//! checks (the AI names, the crawler patterns that are plain literals,
//! the headless tokens, browsers.clf's facts), each hit then checked for
//! its case and whole-word rule; and one regex::bytes::RegexSet (Unicode
//! off: bytes, as Hyperscan reads them) with every real regex (the AI
//! tokens, the other crawler patterns, the empty User-Agent). Sec-CH-UA gets an automaton of its four literals, the
//! path a set of two regexes. The verdict is the one of the lowest
//! priority that matched, in the order default.clf decides, as in the
//! other set peers (bench/peers/re2/peer_re2.cc). Three capture regexes
//! read browser versions, only for browser User-Agents.
//!
//! The harness (requests file, verdict file, timing loops and their JSON
//! line) is bench/harness.c's, rewritten: the same formats and loops.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use std::collections::HashMap;
use std::io::Write;
use std::process::exit;
use std::time::Instant;

// ------------------------------------------------------------ workload

struct Request {
    path: Vec<u8>,
    headers: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Request {
    /// The first value of header `lname` (lower-case), ASCII-caseless.
    fn header(&self, lname: &[u8]) -> Option<&[u8]> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(lname)).map(|(_, v)| &v[..])
    }
    fn header_or_empty(&self, lname: &[u8]) -> &[u8] {
        self.header(lname).unwrap_or(b"")
    }
}

fn die(msg: String) -> ! {
    eprintln!("classify-bench-rust: error: {}", msg);
    exit(1)
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| die(format!("{}: {}", path, e)))
}

/// bench/harness.h's requests file.
fn load_workload(path: &str) -> Vec<Request> {
    let buf = read(path);
    let mut out = Vec::new();
    let mut cur: Option<Request> = None;
    for (i, line) in buf.split(|&c| c == b'\n').enumerate() {
        let f: Vec<&[u8]> = line.split(|&c| c == b'\t').collect();
        if line.is_empty() {
            if let Some(r) = cur.take() {
                out.push(r);
            }
        } else if f[0] == b"R" && f.len() == 4 {
            cur = Some(Request { path: f[2].to_vec(), headers: Vec::new() });
        } else if f[0] == b"H" && f.len() >= 3 && cur.is_some() {
            let v = line[2 + f[1].len() + 1..].to_vec();
            cur.as_mut().unwrap().headers.push((f[1].to_vec(), v));
        } else {
            die(format!("{}:{}: a malformed line", path, i + 1));
        }
    }
    if cur.is_some() || out.is_empty() {
        die(format!("{}: no requests, or the last one is not ended", path));
    }
    out
}

// ------------------------------------------------------------- the peer

const NHL: i32 = 5;
const HL_REASON: [&str; 5] = [
    "headless:chromium",
    "headless:chrome",
    "headless:lightpanda",
    "headless:phantomjs",
    "headless:automation",
];
const REJECT_TAGS: [&str; 4] = ["ai-crawler", "browser-automation", "scanner", "seo"];
const NREJECT: i32 = 4;
const NONE: i32 = i32::MAX;

// Browser facts of the User-Agent (browsers.clf), as bits.
const B_ODD: u32 = 1 << 1;
const B_CHROMIUM: u32 = 1 << 2;
const B_FIREFOX: u32 = 1 << 3;
const B_SAFARI: u32 = 1 << 4;
const B_VERSION: u32 = 1 << 5;
const B_EDG: u32 = 1 << 6;
const B_ANDROID: u32 = 1 << 7;
const B_CROS: u32 = 1 << 8;
const B_IOS: u32 = 1 << 9;
const B_WINDOWS: u32 = 1 << 10;
const B_MAC: u32 = 1 << 11;
const B_LINUX: u32 = 1 << 12;
const B_EDGE_BRAND: u32 = 1 << 13;

/// What a pattern stands for: a priority (lower wins) or browser bits.
#[derive(Clone, Copy)]
struct Fact {
    prio: i32,
    bits: u32,
}

/// A literal of an automaton, with its rules.
struct Lit {
    text: Vec<u8>,
    caseless: bool,
    word: bool, // no [A-Za-z0-9_] right before or after
    fact: Fact,
}

struct Literals {
    ac: AhoCorasick,
    lits: Vec<Lit>,
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl Literals {
    fn new(lits: Vec<Lit>) -> Literals {
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .dfa(true)
            .build(lits.iter().map(|l| &l.text));
        Literals { ac, lits }
    }

    fn scan(&self, s: &[u8], prio: &mut i32, bits: &mut u32) {
        for m in self.ac.find_overlapping_iter(s) {
            let l = &self.lits[m.pattern()];
            if !l.caseless && &s[m.start()..m.end()] != &l.text[..] {
                continue;
            }
            if l.word
                && ((m.start() > 0 && is_word(s[m.start() - 1]))
                    || (m.end() < s.len() && is_word(s[m.end()])))
            {
                continue;
            }
            *prio = (*prio).min(l.fact.prio);
            *bits |= l.fact.bits;
        }
    }
}

/// The peer data's regexes in the syntax of regex 1.7: its parser refuses
/// an escaped punctuation character that is not a regex operator (`\/`,
/// `\!`, later versions take it), so such an escape becomes the plain
/// character, which means the same.
fn rust_syntax(re: &str) -> String {
    let mut out = String::with_capacity(re.len());
    let mut it = re.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some(e) if e.is_ascii_punctuation() && !regex_syntax_meta(e) => out.push(e),
            Some(e) => {
                out.push('\\');
                out.push(e);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The text a regex of the peer data matches when it is a plain literal
/// (characters and escaped punctuation only), None for a real regex.
fn as_literal(re: &str) -> Option<String> {
    let mut out = String::with_capacity(re.len());
    let mut it = re.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some(e) if e.is_ascii_punctuation() => out.push(e),
                _ => return None,
            },
            '.' | '^' | '$' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' => return None,
            _ => out.push(c),
        }
    }
    Some(out)
}

/// regex-syntax 0.6's is_meta_character.
fn regex_syntax_meta(c: char) -> bool {
    "\\.+*?()|[]{}^$#&-~".contains(c)
}

struct Regexes {
    set: RegexSet,
    facts: Vec<Fact>,
}

impl Regexes {
    fn new(pats: Vec<(String, Fact)>) -> Regexes {
        let set = RegexSetBuilder::new(pats.iter().map(|p| rust_syntax(&p.0)))
            .unicode(false)
            .size_limit(1 << 30)
            .dfa_size_limit(64 << 20)
            .build()
            .unwrap_or_else(|e| die(format!("regex: {}", e)));
        Regexes { set, facts: pats.into_iter().map(|p| p.1).collect() }
    }

    fn scan(&self, s: &[u8], prio: &mut i32, bits: &mut u32) {
        for i in self.set.matches(s).iter() {
            *prio = (*prio).min(self.facts[i].prio);
            *bits |= self.facts[i].bits;
        }
    }
}

struct Peer {
    is_default: bool,
    ncats: i32,
    cat_reason: Vec<String>,
    tag_reason: Vec<String>,
    ua_lits: Literals,
    ua_res: Regexes,
    brands: Option<Literals>,
    path: Option<Regexes>,
    captures: Option<[Regex; 3]>, // chrome, firefox, safari majors
}

impl Peer {
    fn hl(&self, k: i32) -> i32 {
        1 + self.ncats + k
    }
    fn reject(&self, k: i32) -> i32 {
        1 + self.ncats + NHL + k
    }
    fn other(&self) -> i32 {
        1 + self.ncats + NHL + NREJECT
    }
}

fn cs(text: &str, fact: Fact) -> Lit {
    Lit { text: text.as_bytes().to_vec(), caseless: false, word: false, fact }
}

fn bits(b: u32) -> Fact {
    Fact { prio: NONE, bits: b }
}

fn load(path: &str, program: &str) -> Peer {
    let is_default = match program {
        "default" => true,
        "ai_robots" => false,
        _ => die(format!("--program: want ai_robots or default, not '{}'", program)),
    };
    let buf = String::from_utf8(read(path)).unwrap_or_else(|_| die(format!("{}: not UTF-8", path)));
    let mut cats: HashMap<String, i32> = HashMap::new();
    let mut cat_reason = Vec::new();
    let mut tags: HashMap<String, usize> = HashMap::new();
    let mut names = Vec::new(); // (category, name)
    let mut tokens = Vec::new(); // (category, regex)
    let mut crawlers = Vec::new(); // (tag index, regex)
    let mut tag_names: Vec<String> = Vec::new();
    for line in buf.lines() {
        let f: Vec<&str> = line.splitn(3, '\t').collect();
        if f.len() != 3 || !matches!(f[0], "AI_NAME" | "AI_TOKEN" | "CRAWLER") {
            continue;
        }
        if f[0] == "CRAWLER" {
            let n = tags.len();
            let t = *tags.entry(f[1].to_string()).or_insert(n);
            if t == tag_names.len() {
                tag_names.push(f[1].to_string());
            }
            crawlers.push((t, f[2].to_string()));
        } else {
            let n = cats.len() as i32;
            let c = *cats.entry(f[1].to_string()).or_insert(n);
            if c as usize == cat_reason.len() {
                cat_reason.push(format!("ai-robots-txt:{}", f[1]));
            }
            if f[0] == "AI_NAME" {
                names.push((c, f[2].to_string()));
            } else {
                tokens.push((c, f[2].to_string()));
            }
        }
    }
    let ncats = cats.len() as i32;
    if ncats == 0 {
        die(format!("{}: no AI_NAME lines", path));
    }
    let prio_ai = |c: i32| 1 + c;
    let hl = |k: i32| 1 + ncats + k;
    let other = 1 + ncats + NHL + NREJECT;

    let mut lits: Vec<Lit> = names
        .iter()
        .map(|(c, n)| Lit {
            text: n.as_bytes().to_vec(),
            caseless: true,
            word: true,
            fact: Fact { prio: prio_ai(*c), bits: 0 },
        })
        .collect();
    let mut res: Vec<(String, Fact)> = Vec::new();
    if is_default {
        res.push((r"^[ \t,]*\z".to_string(), Fact { prio: 0, bits: 0 }));
    }
    for (c, t) in &tokens {
        res.push((format!("(?i){}", t), Fact { prio: prio_ai(*c), bits: 0 }));
    }
    let mut tag_reason = Vec::new();
    let (mut brands, mut path_set, mut captures) = (None, None, None);
    if is_default {
        let mut tag_prio = vec![other; tag_names.len()];
        for (k, t) in REJECT_TAGS.iter().enumerate() {
            let i = *tags.get(*t).unwrap_or_else(|| die(format!("{}: no CRAWLER tagged {}", path, t)));
            tag_prio[i] = 1 + ncats + NHL + k as i32;
            tag_reason.push(format!("crawler:{}", t));
        }
        // the literal patterns (1,457 of 1,493) go to the automaton, the
        // others to the set: one RegexSet of all of them thrashes the lazy
        // DFA (ms per request; bench/README.md)
        for (t, r) in &crawlers {
            let fact = Fact { prio: tag_prio[*t], bits: 0 };
            match as_literal(r) {
                Some(l) => lits.push(Lit { text: l.into_bytes(), caseless: false, word: false, fact }),
                None => res.push((r.clone(), fact)),
            }
        }
        let p = |k| Fact { prio: hl(k), bits: 0 };
        lits.push(cs("HeadlessChromium", p(0)));
        lits.push(cs("HeadlessChrome", p(1)));
        lits.push(Lit { caseless: true, ..cs("lightpanda", p(2)) });
        lits.push(cs("PhantomJS", p(3)));
        for a in ["Puppeteer", "PuppeteerSharp", "Playwright", "Selenium", "SeleniumBase", "HeadlessShell"] {
            lits.push(Lit { word: true, ..cs(a, p(4)) });
        }
        for o in [
            "Kindle/", "Silk/", "Kobo", "; wv)", "SeaMonkey/", "Falkon/", "PaleMoon/", "Goanna/",
            "Waterfox/", "SamsungBrowser/",
        ] {
            lits.push(cs(o, bits(B_ODD)));
        }
        for (t, b) in [
            ("Chrome/", B_CHROMIUM),
            ("CriOS/", B_CHROMIUM),
            ("EdgiOS/", B_CHROMIUM),
            ("Firefox/", B_FIREFOX),
            ("Safari/", B_SAFARI),
            ("Version/", B_VERSION),
            ("Edg/", B_EDG),
            ("Android", B_ANDROID),
            ("CrOS", B_CROS),
            ("iPhone", B_IOS),
            ("iPad", B_IOS),
            ("Windows", B_WINDOWS),
            ("Macintosh", B_MAC),
            ("Linux", B_LINUX),
            ("X11", B_LINUX),
        ] {
            lits.push(cs(t, bits(b)));
        }
        brands = Some(Literals::new(vec![
            cs("HeadlessChromium", p(0)),
            cs("HeadlessChrome", p(1)),
            Lit { caseless: true, ..cs("lightpanda", p(2)) },
            cs("\"Microsoft Edge\"", bits(B_EDGE_BRAND)),
        ]));
        path_set = Some(Regexes::new(vec![
            (
                r"^/(?:robots\.txt|sitemap\.xml|favicon\.(?:ico|png|gif|jpg|jpeg|svg))\z|^/\.well-known/"
                    .to_string(),
                Fact { prio: 0, bits: 0 },
            ),
            (r"(?i)\.\.|%2e|%2f|%5c|//".to_string(), Fact { prio: 1, bits: 0 }),
        ]));
        let re = |s: &str| {
            RegexBuilder::new(s).unicode(false).build().unwrap_or_else(|e| die(format!("regex: {}", e)))
        };
        captures = Some([
            re(r"(?:Chrome|CriOS)/(\d+)"),
            re(r"Firefox/(\d+)"),
            re(r"Version/(\d+)[.0-9]* (?:Mobile/\S+ )?Safari/"),
        ]);
    }
    Peer {
        is_default,
        ncats,
        cat_reason,
        tag_reason,
        ua_lits: Literals::new(lits),
        ua_res: Regexes::new(res),
        brands,
        path: path_set,
        captures,
    }
}

/// docs/language.md to_int of a run of digits, saturating.
fn digits(d: &[u8]) -> i64 {
    d.iter().fold(0i64, |v, &c| v.saturating_mul(10).saturating_add((c - b'0') as i64))
}

fn major(re: &Regex, ua: &[u8]) -> i64 {
    re.captures(ua).and_then(|c| c.get(1)).map_or(0, |m| digits(m.as_bytes()))
}

/// browsers.clf plain_http: the last comma-separated value of
/// X-Forwarded-Proto, trimmed, is "http" in any case.
fn plain_http(r: &Request) -> bool {
    let v = r.header_or_empty(b"x-forwarded-proto");
    let last = v.rsplit(|&c| c == b',').next().unwrap_or(b"");
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
    let s = last.iter().position(|c| !ws(c)).unwrap_or(last.len());
    let e = last.iter().rposition(|c| !ws(c)).map_or(s, |i| i + 1);
    last[s..e.max(s)].eq_ignore_ascii_case(b"http")
}

fn check_headers(p: &Peer, r: &Request, ua: &[u8], b: u32) -> Option<&'static str> {
    if !ua.starts_with(b"Mozilla/5.0 ") || b & B_ODD != 0 || plain_http(r) {
        return None;
    }
    let caps = p.captures.as_ref().unwrap();
    let safari = b & B_SAFARI != 0 && b & B_VERSION != 0 && b & B_CHROMIUM == 0;
    let mut fetch = b & B_CHROMIUM != 0 && major(&caps[0], ua) >= 76;
    if !fetch && b & B_FIREFOX != 0 {
        fetch = major(&caps[1], ua) >= 90;
    }
    if !fetch && safari {
        fetch = major(&caps[2], ua) >= 17;
    }
    if fetch && r.header(b"sec-fetch-mode").is_none() {
        return Some("fake-browser:no-sec-fetch");
    }
    if let Some(pl) = r.header(b"sec-ch-ua-platform") {
        let n = pl.len();
        if n < 2 || pl[0] != b'"' || pl[n - 1] != b'"' || pl[1..n - 1].contains(&b'"') {
            return Some("fake-browser:client-hints");
        }
        let named: &[u8] = if b & B_ANDROID != 0 {
            b"Android"
        } else if b & B_CROS != 0 {
            b"Chrome OS"
        } else if b & B_IOS != 0 {
            b"iOS"
        } else if b & B_WINDOWS != 0 {
            b"Windows"
        } else if b & B_MAC != 0 {
            b"macOS"
        } else if b & B_LINUX != 0 {
            b"Linux"
        } else {
            b""
        };
        if !named.is_empty() && &pl[1..n - 1] != named {
            return Some("fake-browser:client-hints");
        }
    }
    if !r.header_or_empty(b"sec-ch-ua").is_empty() && (b & B_EDGE_BRAND != 0) != (b & B_EDG != 0) {
        return Some("fake-browser:edge-brand");
    }
    None
}

/// (reject, reason); the reason borrows from the peer.
fn classify<'a>(p: &'a Peer, r: &Request) -> (bool, &'a str) {
    let (mut prio, mut b) = (NONE, 0u32);
    if p.is_default {
        let ps = p.path.as_ref().unwrap();
        let m = ps.set.matches(&r.path);
        if m.matched(0) && !m.matched(1) {
            return (false, "well-known-path");
        }
    } else if r.path == b"/robots.txt" {
        return (false, "");
    }
    // default: step 1 accepted /robots.txt (ai_robots.check skips it)
    let ua = r.header_or_empty(b"user-agent");
    p.ua_lits.scan(ua, &mut prio, &mut b);
    p.ua_res.scan(ua, &mut prio, &mut b);
    if !p.is_default {
        return if prio == NONE { (false, "") } else { (true, &p.cat_reason[(prio - 1) as usize]) };
    }
    let brands = r.header_or_empty(b"sec-ch-ua");
    if !brands.is_empty() {
        p.brands.as_ref().unwrap().scan(brands, &mut prio, &mut b);
    }
    if prio == 0 {
        (true, "no-user-agent")
    } else if prio < p.hl(0) {
        (true, &p.cat_reason[(prio - 1) as usize])
    } else if prio < p.reject(0) {
        (true, HL_REASON[(prio - p.hl(0)) as usize])
    } else if prio < p.other() {
        (true, &p.tag_reason[(prio - p.reject(0)) as usize])
    } else if prio == p.other() {
        (false, "")
    } else {
        match check_headers(p, r, ua, b) {
            Some(why) => (true, why),
            None => (false, ""),
        }
    }
}

// ------------------------------------------------------------- harness

fn rss_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<u64>().ok())
        .map_or(0, |k| k * 1024)
}

fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let k = (p * v.len() as f64).ceil() as usize;
    v[if k == 0 { 0 } else { k - 1 }]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

/// bench/harness.c bh_time, one thread.
fn time(p: &Peer, w: &[Request], seconds: f64) {
    let mut d = Vec::with_capacity(20001);
    for _ in 0..20001 {
        let a = Instant::now();
        let b = Instant::now();
        d.push((b - a).as_nanos() as f64);
    }
    let overhead = sorted(d)[10000];
    let mut sink = 0usize;
    for r in w {
        sink += classify(p, r).1.len(); // warm-up
    }
    let (mut pass, mut single) = (Vec::new(), Vec::new());
    let t0 = Instant::now();
    let mut requests = 0u64;
    loop {
        let a = Instant::now();
        for r in w {
            sink += classify(p, r).1.len();
        }
        pass.push(a.elapsed().as_nanos() as f64 / w.len() as f64);
        requests += w.len() as u64;
        if t0.elapsed().as_secs_f64() >= seconds {
            break;
        }
    }
    let pass_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let mut i = 0;
    loop {
        for _ in 0..64 {
            let a = Instant::now();
            sink += classify(p, &w[i]).1.len();
            let b = Instant::now();
            single.push((b - a).as_nanos() as f64 - overhead);
            i = (i + 1) % w.len();
        }
        if t1.elapsed().as_secs_f64() >= seconds / 2.0 {
            break;
        }
    }
    keep(sink);
    let single = sorted(single);
    let passes: Vec<String> = pass.iter().map(|x| format!("{:.2}", x)).collect();
    println!(
        "{{\"method\": \"rust\", \"threads\": 1, \"requests\": {}, \"pass_ns\": [{}], \
         \"single_ns\": {{\"n\": {}, \"median\": {:.1}, \"p99\": {:.1}}}, \"overhead_ns\": {:.1}, \
         \"throughput_rps\": {:.0}}}",
        w.len(),
        passes.join(", "),
        single.len(),
        pct(&single, 0.5),
        pct(&single, 0.99),
        overhead,
        requests as f64 / pass_s
    );
}

fn usage() -> ! {
    eprintln!(
        "usage: classify-bench-rust REQUESTS --peerdata PEERDATA.txt --program ai_robots|default\n\
         \x20          (--verdicts FILE | --time SECONDS [--threads 1] | --stats)"
    );
    exit(2)
}

/// Keeps `x` alive past the optimizer (std::hint::black_box is newer
/// than Debian's rustc 1.63).
fn keep(x: usize) {
    unsafe { std::ptr::read_volatile(&x) };
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mut peerdata, mut program, mut mode, mut value) = (None, None, None, None);
    let mut i = 2;
    while i < args.len() {
        match args[i].as_str() {
            "--peerdata" if i + 1 < args.len() => peerdata = Some(args[i + 1].clone()),
            "--program" if i + 1 < args.len() => program = Some(args[i + 1].clone()),
            "--verdicts" | "--time" if i + 1 < args.len() => {
                mode = Some(args[i].clone());
                value = Some(args[i + 1].clone());
            }
            // one thread only: the harness's --threads N > 1 is for the C methods
            "--threads" if i + 1 < args.len() && args[i + 1] == "1" => {}
            "--stats" => {
                mode = Some(args[i].clone());
                i += 1;
                continue;
            }
            _ => usage(),
        }
        i += 2;
    }
    let (peerdata, program, mode) = match (peerdata, program, mode) {
        (Some(a), Some(b), Some(c)) => (a, b, c),
        _ => usage(),
    };
    if args.len() < 2 || args[1].starts_with('-') {
        usage();
    }
    let w = load_workload(&args[1]);
    let rss0 = rss_bytes();
    let t0 = Instant::now();
    let p = load(&peerdata, &program);
    let compile_ns = t0.elapsed().as_nanos();
    let rss1 = rss_bytes();
    let value = value.unwrap_or_default();
    match mode.as_str() {
        "--verdicts" => {
            let mut out = String::new();
            for r in &w {
                let (rej, why) = classify(&p, r);
                out.push_str(if rej { "reject\t" } else { "accept\t" });
                out.push_str(why);
                out.push('\n');
            }
            let tmp = format!("{}.tmp", value);
            std::fs::write(&tmp, out)
                .and_then(|_| std::fs::rename(&tmp, &value))
                .unwrap_or_else(|e| die(format!("{}: {}", value, e)));
        }
        "--time" => {
            let s: f64 = value.parse().unwrap_or_else(|_| die("--time: want seconds".into()));
            if !(s > 0.0 && s < 3600.0) {
                die("--time: want seconds in (0, 3600)".into());
            }
            time(&p, &w, s);
        }
        _ => {
            let mut sink = 0;
            for r in &w {
                sink += classify(&p, r).1.len();
            }
            keep(sink);
            let rss2 = rss_bytes();
            println!(
                "{{\"method\": \"rust\", \"compile_ns\": {}, \"rules_rss_bytes\": {}, \"pass_rss_bytes\": {}}}",
                compile_ns,
                rss1.saturating_sub(rss0),
                rss2.saturating_sub(rss0)
            );
        }
    }
    std::io::stdout().flush().ok();
}
