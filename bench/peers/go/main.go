// classify-bench-go: the Go peer of the classification benchmark
// (bench/README.md): the `default` and `ai_robots` checks as a Go
// programmer writes them with the standard library's regexp, what Anubis
// and go-away evaluate their rules with.
//
//	classify-bench-go REQUESTS --peerdata PEERDATA.txt
//	    --program ai_robots|default [--strategy loop|alt]
//	    (--verdicts FILE | --time SECONDS [--threads 1] | --stats)
//
// Go's regexp has no set matcher, so the checks are groups in the order
// default.clf decides (the empty User-Agent, each AI category, each
// headless token, the four rejected crawler tags, every other crawler),
// tried in that order until one matches: the first that does decides.
// Two ways to test a group:
//
//	loop (the default): pattern by pattern, the literal ones with
//	    strings.Contains (the AI names: on the User-Agent lower-cased once,
//	    with the whole-word test in code), the real regexes with
//	    regexp.MatchString;
//	alt: one regexp alternation per group.
//
// bench/README.md gives both figures and why loop is the default (Go's
// regexp runs a large alternation in its NFA simulation, byte by byte for
// every live alternative). browsers.clf's few literal facts are
// strings.Contains, as the .clf reads; three capture regexes read
// browser versions.
//
// The harness (requests file, verdict file, timing loops and their JSON
// line) is bench/harness.c's, rewritten: the same formats and loops.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ------------------------------------------------------------ workload

type header struct{ name, value string }

type request struct {
	path    string
	headers []header
}

// The first value of header lname (lower-case), ASCII-caseless.
func (r *request) header(lname string) (string, bool) {
	for _, h := range r.headers {
		if len(h.name) == len(lname) && strings.EqualFold(h.name, lname) {
			return h.value, true
		}
	}
	return "", false
}

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "classify-bench-go: error: "+format+"\n", a...)
	os.Exit(1)
}

// bench/harness.h's requests file.
func loadWorkload(path string) []request {
	buf, err := os.ReadFile(path)
	if err != nil {
		die("%v", err)
	}
	var out []request
	var cur *request
	for i, line := range strings.Split(string(buf), "\n") {
		f := strings.SplitN(line, "\t", 3)
		switch {
		case line == "":
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		case f[0] == "R" && len(f) == 3 && strings.Count(f[2], "\t") == 1:
			// R <method> <path> <query>: the path, as the checks read
			cur = &request{path: f[2][:strings.IndexByte(f[2], '\t')]}
		case f[0] == "H" && len(f) == 3 && cur != nil:
			cur.headers = append(cur.headers, header{f[1], f[2]})
		default:
			die("%s:%d: a malformed line", path, i+1)
		}
	}
	if cur != nil || len(out) == 0 {
		die("%s: no requests, or the last one is not ended", path)
	}
	return out
}

// ------------------------------------------------------------- the peer

var hlReason = []string{"headless:chromium", "headless:chrome", "headless:lightpanda",
	"headless:phantomjs", "headless:automation"}
var rejectTags = []string{"ai-crawler", "browser-automation", "scanner", "seo"}

// One group: a priority, and what matches it.
type group struct {
	reject bool
	reason string
	lits   []string         // strings.Contains on the User-Agent
	words  []string         // lower-cased: whole words, caselessly
	res    []*regexp.Regexp // on the User-Agent
	alt    *regexp.Regexp   // strategy alt: all of the above as one
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// containsWord: w (lower-case) in lower, no word byte right before or after.
func containsWord(lower, w string) bool {
	for off := 0; ; {
		i := strings.Index(lower[off:], w)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(w)
		if (i == 0 || !isWord(lower[i-1])) && (j == len(lower) || !isWord(lower[j])) {
			return true
		}
		off = i + 1
	}
}

func (g *group) match(ua, lower string) bool {
	if g.alt != nil {
		return g.alt.MatchString(ua)
	}
	for _, l := range g.lits {
		if strings.Contains(ua, l) {
			return true
		}
	}
	for _, w := range g.words {
		if containsWord(lower, w) {
			return true
		}
	}
	for _, re := range g.res {
		if re.MatchString(ua) {
			return true
		}
	}
	return false
}

func compile(s string) *regexp.Regexp {
	re, err := regexp.Compile(s)
	if err != nil {
		die("regexp: %v", err)
	}
	return re
}

// The group as one alternation (strategy alt).
func (g *group) makeAlt() {
	var parts []string
	for _, l := range g.lits {
		parts = append(parts, regexp.QuoteMeta(l))
	}
	if len(g.words) > 0 {
		var w []string
		for _, x := range g.words {
			w = append(w, regexp.QuoteMeta(x))
		}
		parts = append(parts, "(?i:(?:^|[^A-Za-z0-9_])(?:"+strings.Join(w, "|")+")(?:[^A-Za-z0-9_]|$))")
	}
	for _, re := range g.res {
		parts = append(parts, "(?:"+re.String()+")")
	}
	g.alt = compile(strings.Join(parts, "|"))
}

// literal: the text a regex of the peer data matches when it is a plain
// literal (characters and escaped punctuation only).
func literal(re string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		c := re[i]
		switch {
		case c == '\\':
			if i+1 < len(re) && re[i+1] < 0x80 && !isWord(re[i+1]) {
				b.WriteByte(re[i+1])
				i++
				continue
			}
			return "", false
		case strings.IndexByte(".^$*+?()[]{}|", c) >= 0:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

type peer struct {
	isDefault bool
	ua        []group // in priority order
	path      *regexp.Regexp
	chrome    *regexp.Regexp
	firefox   *regexp.Regexp
	safari    *regexp.Regexp
}

func load(path, program, strategy string) *peer {
	p := &peer{}
	switch program {
	case "default":
		p.isDefault = true
	case "ai_robots":
	default:
		die("--program: want ai_robots or default, not '%s'", program)
	}
	f, err := os.Open(path)
	if err != nil {
		die("%v", err)
	}
	defer f.Close()
	cats := map[string]int{}
	var catGroups []group
	tags := map[string]int{}
	var tagNames []string
	var tagGroups []group
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		x := strings.SplitN(sc.Text(), "\t", 3)
		if len(x) != 3 {
			continue
		}
		switch x[0] {
		case "AI_NAME", "AI_TOKEN":
			c, ok := cats[x[1]]
			if !ok {
				c = len(catGroups)
				cats[x[1]] = c
				catGroups = append(catGroups, group{reject: true, reason: "ai-robots-txt:" + x[1]})
			}
			if x[0] == "AI_NAME" {
				catGroups[c].words = append(catGroups[c].words, asciiLower(x[2]))
			} else {
				catGroups[c].res = append(catGroups[c].res, compile("(?i)(?:"+x[2]+")"))
			}
		case "CRAWLER":
			t, ok := tags[x[1]]
			if !ok {
				t = len(tagGroups)
				tags[x[1]] = t
				tagNames = append(tagNames, x[1])
				tagGroups = append(tagGroups, group{})
			}
			if l, ok := literal(x[2]); ok {
				tagGroups[t].lits = append(tagGroups[t].lits, l)
			} else {
				tagGroups[t].res = append(tagGroups[t].res, compile(x[2]))
			}
		}
	}
	if err := sc.Err(); err != nil {
		die("%s: %v", path, err)
	}
	if len(catGroups) == 0 {
		die("%s: no AI_NAME lines", path)
	}
	if p.isDefault {
		p.ua = append(p.ua, group{reject: true, reason: "no-user-agent",
			res: []*regexp.Regexp{compile(`^[ \t,]*$`)}})
	}
	p.ua = append(p.ua, catGroups...)
	if p.isDefault {
		hl := []group{
			{lits: []string{"HeadlessChromium"}}, {lits: []string{"HeadlessChrome"}},
			{words: nil, res: []*regexp.Regexp{compile("(?i)lightpanda")}},
			{lits: []string{"PhantomJS"}},
			{res: []*regexp.Regexp{compile(`(?:^|[^A-Za-z0-9_])(?:Puppeteer|PuppeteerSharp|Playwright|` +
				`Selenium|SeleniumBase|HeadlessShell)(?:[^A-Za-z0-9_]|$)`)}},
		}
		for k := range hl {
			hl[k].reject, hl[k].reason = true, hlReason[k]
		}
		p.ua = append(p.ua, hl...)
		other := group{}
		done := map[int]bool{}
		for _, name := range rejectTags {
			t, ok := tags[name]
			if !ok {
				die("%s: no CRAWLER pattern tagged %s", path, name)
			}
			g := tagGroups[t]
			g.reject, g.reason = true, "crawler:"+name
			p.ua = append(p.ua, g)
			done[t] = true
		}
		for t := range tagNames {
			if !done[t] {
				other.lits = append(other.lits, tagGroups[t].lits...)
				other.res = append(other.res, tagGroups[t].res...)
			}
		}
		p.ua = append(p.ua, other)
		p.path = compile(`^/(?:robots\.txt|sitemap\.xml|favicon\.(?:ico|png|gif|jpg|jpeg|svg))$|^/\.well-known/`)
		p.chrome = compile(`(?:Chrome|CriOS)/(\d+)`)
		p.firefox = compile(`Firefox/(\d+)`)
		p.safari = compile(`Version/(\d+)[.0-9]* (?:Mobile/\S+ )?Safari/`)
	}
	switch strategy {
	case "alt":
		for k := range p.ua {
			p.ua[k].makeAlt()
		}
	case "loop":
	default:
		die("--strategy: want loop or alt, not '%s'", strategy)
	}
	return p
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

func containsAny(s string, lits ...string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

// docs/language.md to_int of a run of digits, saturating.
func major(re *regexp.Regexp, ua string) int64 {
	m := re.FindStringSubmatch(ua)
	if m == nil {
		return 0
	}
	var v int64
	for _, c := range []byte(m[1]) {
		d := int64(c - '0')
		if v > (1<<63-1-d)/10 {
			return 1<<63 - 1
		}
		v = v*10 + d
	}
	return v
}

// browsers.clf plain_http: the last comma-separated value of
// X-Forwarded-Proto, trimmed, is "http" in any case.
func plainHTTP(r *request) bool {
	v, _ := r.header("x-forwarded-proto")
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.EqualFold(strings.Trim(v, " \t\r\n"), "http")
}

var oddButReal = []string{"Kindle/", "Silk/", "Kobo", "; wv)", "SeaMonkey/", "Falkon/",
	"PaleMoon/", "Goanna/", "Waterfox/", "SamsungBrowser/"}

// browsers.clf check_headers: the reason, or "".
func (p *peer) checkHeaders(r *request, ua string) string {
	if !strings.HasPrefix(ua, "Mozilla/5.0 ") || containsAny(ua, oddButReal...) || plainHTTP(r) {
		return ""
	}
	chromium := containsAny(ua, "Chrome/", "CriOS/", "EdgiOS/")
	safari := strings.Contains(ua, "Safari/") && strings.Contains(ua, "Version/") && !chromium
	fetch := chromium && major(p.chrome, ua) >= 76
	if !fetch && strings.Contains(ua, "Firefox/") {
		fetch = major(p.firefox, ua) >= 90
	}
	if !fetch && safari {
		fetch = major(p.safari, ua) >= 17
	}
	if _, ok := r.header("sec-fetch-mode"); fetch && !ok {
		return "fake-browser:no-sec-fetch"
	}
	if pl, ok := r.header("sec-ch-ua-platform"); ok {
		n := len(pl)
		if n < 2 || pl[0] != '"' || pl[n-1] != '"' || strings.IndexByte(pl[1:n-1], '"') >= 0 {
			return "fake-browser:client-hints"
		}
		named := ""
		switch {
		case strings.Contains(ua, "Android"):
			named = "Android"
		case strings.Contains(ua, "CrOS"):
			named = "Chrome OS"
		case containsAny(ua, "iPhone", "iPad"):
			named = "iOS"
		case strings.Contains(ua, "Windows"):
			named = "Windows"
		case strings.Contains(ua, "Macintosh"):
			named = "macOS"
		case containsAny(ua, "Linux", "X11"):
			named = "Linux"
		}
		if named != "" && pl[1:n-1] != named {
			return "fake-browser:client-hints"
		}
	}
	if b, _ := r.header("sec-ch-ua"); b != "" &&
		strings.Contains(b, `"Microsoft Edge"`) != strings.Contains(ua, "Edg/") {
		return "fake-browser:edge-brand"
	}
	return ""
}

func containsCI(s, lowerLit string) bool {
	return strings.Contains(asciiLower(s), lowerLit)
}

func (p *peer) classify(r *request) (bool, string) {
	if p.isDefault {
		if p.path.MatchString(r.path) && !containsAny(asciiLower(r.path), "..", "%2e", "%2f", "%5c", "//") {
			return false, "well-known-path"
		}
	} else if r.path == "/robots.txt" {
		return false, ""
	}
	// default: step 1 accepted /robots.txt (ai_robots.check skips it)
	ua, _ := r.header("user-agent")
	lower := asciiLower(ua)
	brands, _ := r.header("sec-ch-ua")
	for k := range p.ua {
		g := &p.ua[k]
		if g.match(ua, lower) {
			return g.reject, g.reason
		}
		// headless.check also reads Sec-CH-UA, for its first three tokens
		if p.isDefault && brands != "" && g.reject && strings.HasPrefix(g.reason, "headless:") {
			switch g.reason {
			case "headless:chromium":
				if strings.Contains(brands, "HeadlessChromium") {
					return true, g.reason
				}
			case "headless:chrome":
				if strings.Contains(brands, "HeadlessChrome") {
					return true, g.reason
				}
			case "headless:lightpanda":
				if containsCI(brands, "lightpanda") {
					return true, g.reason
				}
			}
		}
	}
	if !p.isDefault {
		return false, ""
	}
	why := p.checkHeaders(r, ua)
	return why != "", why
}

// ------------------------------------------------------------- harness

// The live heap after a collection: what the rules hold (Go's resident
// set reuses the pages the workload's loading left, so it shows little).
func heapBytes() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	k := int(p*float64(len(v)) + 0.999999999)
	if k == 0 {
		k = 1
	}
	return v[k-1]
}

var sink int

// bench/harness.c bh_time, one thread.
func timeIt(p *peer, w []request, seconds float64) {
	d := make([]float64, 20001)
	for i := range d {
		a := time.Now()
		b := time.Now()
		d[i] = float64(b.Sub(a).Nanoseconds())
	}
	sort.Float64s(d)
	overhead := d[10000]
	for i := range w {
		_, why := p.classify(&w[i]) // warm-up
		sink += len(why)
	}
	var pass, single []float64
	budget := time.Duration(seconds * 1e9)
	t0 := time.Now()
	requests := 0
	for {
		a := time.Now()
		for i := range w {
			_, why := p.classify(&w[i])
			sink += len(why)
		}
		pass = append(pass, float64(time.Since(a).Nanoseconds())/float64(len(w)))
		requests += len(w)
		if time.Since(t0) >= budget {
			break
		}
	}
	passS := time.Since(t0).Seconds()
	t1 := time.Now()
	for i := 0; ; {
		for j := 0; j < 64; j++ {
			a := time.Now()
			_, why := p.classify(&w[i])
			b := time.Now()
			sink += len(why)
			single = append(single, float64(b.Sub(a).Nanoseconds())-overhead)
			if i++; i == len(w) {
				i = 0
			}
		}
		if time.Since(t1) >= budget/2 {
			break
		}
	}
	sort.Float64s(single)
	ps := make([]string, len(pass))
	for i, x := range pass {
		ps[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	fmt.Printf("{\"method\": \"go\", \"threads\": 1, \"requests\": %d, \"pass_ns\": [%s], "+
		"\"single_ns\": {\"n\": %d, \"median\": %.1f, \"p99\": %.1f}, \"overhead_ns\": %.1f, "+
		"\"throughput_rps\": %.0f}\n", len(w), strings.Join(ps, ", "), len(single),
		pct(single, 0.5), pct(single, 0.99), overhead, float64(requests)/passS)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: classify-bench-go REQUESTS --peerdata PEERDATA.txt "+
		"--program ai_robots|default [--strategy loop|alt]\n"+
		"           (--verdicts FILE | --time SECONDS [--threads 1] | --stats)")
	os.Exit(2)
}

func main() {
	a := os.Args
	if len(a) < 2 || strings.HasPrefix(a[1], "-") {
		usage()
	}
	var peerdata, program, mode, value string
	strategy := "loop"
	for i := 2; i < len(a); i++ {
		switch {
		case a[i] == "--stats":
			mode = a[i]
		case i+1 < len(a) && a[i] == "--peerdata":
			peerdata, i = a[i+1], i+1
		case i+1 < len(a) && a[i] == "--program":
			program, i = a[i+1], i+1
		case i+1 < len(a) && a[i] == "--threads" && a[i+1] == "1":
			i++ // one thread only: --threads N > 1 is for the C methods
		case i+1 < len(a) && a[i] == "--strategy":
			strategy, i = a[i+1], i+1
		case i+1 < len(a) && (a[i] == "--verdicts" || a[i] == "--time"):
			mode, value, i = a[i], a[i+1], i+1
		default:
			usage()
		}
	}
	if peerdata == "" || program == "" || mode == "" {
		usage()
	}
	w := loadWorkload(a[1])
	rss0 := heapBytes()
	t0 := time.Now()
	p := load(peerdata, program, strategy)
	compileNs := time.Since(t0).Nanoseconds()
	rss1 := heapBytes()
	runtime.KeepAlive(w)
	switch mode {
	case "--verdicts":
		var b strings.Builder
		for i := range w {
			rej, why := p.classify(&w[i])
			if rej {
				b.WriteString("reject\t")
			} else {
				b.WriteString("accept\t")
			}
			b.WriteString(why)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(value+".tmp", []byte(b.String()), 0o644); err != nil {
			die("%v", err)
		}
		if err := os.Rename(value+".tmp", value); err != nil {
			die("%v", err)
		}
	case "--time":
		s, err := strconv.ParseFloat(value, 64)
		if err != nil || !(s > 0 && s < 3600) {
			die("--time: want seconds in (0, 3600)")
		}
		timeIt(p, w, s)
	default:
		for i := range w {
			_, why := p.classify(&w[i])
			sink += len(why)
		}
		rss2 := heapBytes()
		runtime.KeepAlive(p)
		runtime.KeepAlive(w)
		sub := func(x, y uint64) uint64 {
			if x > y {
				return x - y
			}
			return 0
		}
		fmt.Printf("{\"method\": \"go\", \"compile_ns\": %d, \"rules_rss_bytes\": %d, "+
			"\"pass_rss_bytes\": %d}\n", compileNs, sub(rss1, rss0), sub(rss2, rss0))
	}
}
