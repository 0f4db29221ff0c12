"""`clf-import`: convert other bot-blocking rule formats to .clf.

    clf-import anubis POLICY.yaml|json [--data-dir DIR] [-o OUT.clf]
    clf-import robots-txt ROBOTS.txt [--name NAME] [-o OUT.clf]

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


def main(argv=None):
    args = build_parser().parse_args(argv)
    src = args.robots if args.format == "robots-txt" else args.policy
    try:
        if args.format == "robots-txt":
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
