"""`clf-import`: convert other bot-blocking rule formats to .clf.

    clf-import anubis POLICY.yaml|json [--data-dir DIR] [-o OUT.clf]
    clf-import robots-txt ROBOTS.txt [--name NAME] [-o OUT.clf]
    clf-import verified-bots DIR | [LIST=]FILE... [--incomplete LIST] [--partial] [-o OUT.clf]
    clf-import verified-bots --lists

Exit status: 0 converted; 1 bad input (one line on standard error,
`clf-import: FILE:LINE: error: MESSAGE`), or the output could not be
written; 2 usage error. The output is written whole or not at all.
"""

import argparse
import os
import re
import sys
import tempfile

from . import InputError, __version__

PROG = "clf-import"

EPILOG = """\
converters:
  anubis       An Anubis bot policy (botPolicies.yaml or .json, with its
               `import: (data)/...` snippets read from --data-dir) becomes
               a .clf file whose `main` gives the policy's verdicts.
  robots-txt   The User-agent groups of a robots.txt that disallow the
               whole site (`Disallow: /`) become a case-insensitive set of
               agent names, rejected as whole words (reason "robots-txt",
               or --name), as Anubis' robots2policy selects its DENY rules.
  verified-bots  The crawler operators' published IP lists (Google's,
               Bing's, OpenAI's ... JSON files; Amazon's HTML page), in a
               directory laid out as the shared corpora are or as files,
               become the verified_bots package: per crawler, whether a
               User-Agent claim is verified, forged or unverifiable
               (stdlib/verified_bots.clf is this converter's output for
               ../shared/corpora/verified-bots). `--lists` prints the
               lists, their URLs and their paths in a directory.

The result goes to standard output, or atomically to -o FILE (a temporary
file renamed into place: never a partial file). Compile it with
`classifyc OUT.clf -o rules.bin`. See docs/importers.md.

exit status: 0 converted; 1 bad input or unwritable output
(`clf-import: FILE:LINE: error: MESSAGE`); 2 usage error.
"""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write("%s: error: %s\n" % (PROG, message))
        sys.stderr.write("Try '%s --help' for more information.\n" % PROG)
        sys.exit(2)


def build_parser():
    p = Parser(prog=PROG, description="Convert other bot-blocking rule formats to .clf rules.",
               epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version="%s %s" % (PROG, __version__))
    sub = p.add_subparsers(dest="format", metavar="FORMAT", parser_class=Parser)
    sub.required = True
    a = sub.add_parser("anubis", help="an Anubis bot policy (YAML or JSON)",
                       description="Convert an Anubis bot policy file to .clf.")
    a.add_argument("policy", metavar="POLICY", help="botPolicies.yaml or .json")
    a.add_argument("--data-dir", metavar="DIR",
                   help="directory that `(data)/...` imports refer to (Anubis' data/ directory)")
    a.add_argument("-o", "--output", metavar="OUT.clf", help="write here (atomically) instead of standard output")
    r = sub.add_parser("robots-txt", help="agents a robots.txt disallows from the whole site",
                       description="Convert the `Disallow: /` groups of a robots.txt to a .clf reject set.")
    r.add_argument("robots", metavar="ROBOTS.txt", help='the robots.txt file ("-": standard input)')
    r.add_argument("--name", metavar="NAME", help='the reject reason (default "robots-txt")')
    r.add_argument("-o", "--output", metavar="OUT.clf", help="write here (atomically) instead of standard output")
    v = sub.add_parser("verified-bots", help="crawler operators' published IP lists",
                       description="Convert the crawler operators' published IP lists to the verified_bots "
                                   "package (stdlib/README.md, docs/importers.md). DIR holds each list at "
                                   "its path of --lists, with a LICENSE-NOTE.md naming each file's source "
                                   "and licence (optional). A FILE is recognized by its name (the last "
                                   "part of the list's URL); name the list with LIST=FILE otherwise.")
    v.add_argument("inputs", metavar="DIR | [LIST=]FILE", nargs="*",
                   help="a directory of lists, or a publisher's list (JSON, or Amazon's HTML page)")
    v.add_argument("--incomplete", metavar="LIST", action="append", default=[],
                   help="this copy of LIST is trimmed: an address outside it is unverifiable, not forged "
                        "(repeatable)")
    v.add_argument("--partial", action="store_true",
                   help="allow lists to be missing (their crawlers are then verified by no address)")
    v.add_argument("--lists", action="store_true", help="print the lists (LIST, publisher, URL, path) and exit")
    v.add_argument("-o", "--output", metavar="OUT.clf", help="write here (atomically) instead of standard output")
    return p


def write_output(path, text):
    """Standard output, or `path` through a temporary file in its directory,
    renamed into place once complete."""
    data = text.encode("utf-8", "surrogateescape")
    if path is None or path == "-":
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise InputError("cannot write standard output: %s" % (e.strerror or e), "-")
        return
    # The rename below would replace a device, FIFO or directory entry
    # (as root, -o /dev/null would destroy /dev/null): refuse them.
    if os.path.lexists(path) and not os.path.isfile(path):
        raise InputError("refusing to write: not a regular file", path)
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    except OSError as e:
        raise InputError("cannot write: %s" % (e.strerror or e), path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InputError("cannot write: %s" % (e.strerror or e), path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_LOCATED = re.compile(r"^\S.*?:\d+: ")


def format_error(e, default_path):
    """`FILE:LINE: error: MESSAGE` for an InputError or a converter's own
    error class (anubis.ConvertError): a `path`/`line` attribute is used when
    present; a message already starting with `FILE:LINE: ` is kept as is."""
    msg = str(e)
    path = getattr(e, "path", None)
    line = getattr(e, "line", None)
    if path is not None:
        loc = "%s:%d" % (path, line) if line else str(path)
        return "%s: error: %s" % (loc, getattr(e, "msg", msg))
    if _LOCATED.match(msg):
        head, rest = msg.split(": ", 1) if ": error: " not in msg else (None, None)
        if head is None:
            return msg
        return "%s: error: %s" % (head, rest)
    return "%s: error: %s" % (default_path, msg)


def verified_bots_text(args):
    """The verified_bots package for `clf-import verified-bots` arguments."""
    from . import verified_bots as vb
    if args.lists:
        return "".join("%-29s %-24s %s\n%29s %s\n" % (l["id"], l["publisher"], l["url"], "", l["corpus"])
                       for l in vb.LISTS)
    if not args.inputs:
        build_parser().error("verified-bots: no input (a directory or files; --lists prints the lists)")
    for name in args.incomplete:
        if name not in vb.LIST_BY_ID:
            build_parser().error("verified-bots: unknown list '%s' in --incomplete (lists: %s)"
                                 % (name, ", ".join(vb.LIST_BY_ID)))
    if any(os.path.isdir(a) for a in args.inputs):
        if len(args.inputs) > 1:
            build_parser().error("verified-bots: a directory is the only input")
        lists = vb.read_corpus(args.inputs[0], args.partial)
    else:
        lists = {}
        for arg in args.inputs:
            name, eq, path = arg.partition("=")
            if eq and name in vb.LIST_BY_ID:
                list_id = name
            elif eq and re.fullmatch(r"[a-z0-9-]+", name):
                build_parser().error("verified-bots: unknown list '%s' in '%s' (lists: %s)"
                                     % (name, arg, ", ".join(vb.LIST_BY_ID)))
            else:
                path = arg
                list_id = vb.list_for_file(path)
                if list_id is None:
                    raise InputError("cannot tell which list this file is from its name; write LIST=%s "
                                     "(clf-import verified-bots --lists)" % path, path)
            if list_id in lists:
                raise InputError("list %s given twice (also %s)" % (list_id, lists[list_id].display), path)
            lists[list_id] = vb.read_list(path, list_id, path)
        missing = [l["id"] for l in vb.LISTS if l["id"] not in lists]
        if missing and not args.partial:
            raise InputError("lists missing: %s (give them, or --partial to go without: their crawlers "
                             "are then verified by no address)" % ", ".join(missing), "verified-bots")
    for name in args.incomplete:
        if name in lists:
            lists[name].incomplete = True
    return vb.render(lists)


def main(argv=None):
    args = build_parser().parse_args(argv)
    src = {"robots-txt": "robots", "anubis": "policy"}.get(args.format)
    src = getattr(args, src) if src else "verified-bots"
    try:
        if args.format == "verified-bots":
            text = verified_bots_text(args)
            if args.lists:
                write_output(None, text)
                return 0
        elif args.format == "robots-txt":
            from . import robots_txt
            if args.name is not None and args.name == "":
                build_parser().error("--name must not be empty")
            text = robots_txt.convert(args.robots, args.name)
        else:
            from . import anubis
            try:
                text = anubis.convert(args.policy, args.data_dir)
            except anubis.ConvertError as e:
                sys.stderr.write("%s: %s\n" % (PROG, format_error(e, args.policy)))
                return 1
        write_output(args.output, text)
    except InputError as e:
        sys.stderr.write("%s: %s\n" % (PROG, format_error(e, src)))
        return 1
    except BrokenPipeError:
        return 1
    except RecursionError:
        sys.stderr.write("%s: %s: error: nested too deeply (imports or expressions)\n" % (PROG, src))
        return 1
    except (TypeError, ValueError, UnicodeError) as e:
        # An input shape the converters do not expect (a YAML key that is a
        # list, a lone surrogate escape, ...): say so instead of a traceback.
        sys.stderr.write("%s: %s: error: cannot convert this input (%s: %.200s)\n"
                         % (PROG, src, type(e).__name__, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
