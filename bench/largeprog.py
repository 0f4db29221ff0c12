"""bench/largeprog.py: large generated .clf programs, the shapes that once
made classifyc's cost grow faster than the program (issue 12): long `||`
and `&&` chains, and bodies with tens of thousands of locals. Used by
bench/run.py (compile time and peak memory) and by
tests/regress/test_compile_scale.py (bounds on both)."""


def chains(op, nchains, length):
    """`nchains` ifs, each testing a chain of `length` path comparisons
    joined by `op` ("||" or "&&"): 8 x 9,000 is 1.4 MB of source."""
    body = []
    for c in range(nchains):
        terms = (" %s " % op).join('req.path == "/%d/%d"' % (c, i) for i in range(length))
        body.append("    if %s { reject \"c%d\" }" % (terms, c))
    return "filter main(req: Request) {\n%s\n    accept\n}\n" % "\n".join(body)


def true_chain(length):
    """One if on `true || true || ...`: constant operands, no patterns."""
    return ("filter main(req: Request) {\n    if %s { accept }\n    reject\n}\n"
            % " || ".join(["true"] * length))


def many_locals(n):
    """One body declaring `n` locals (under the 65,535-register limit)."""
    return ("filter main(req: Request) {\n%s\n    accept\n}\n"
            % "\n".join("    let _v%d = %d" % (i, i) for i in range(n)))


# The programs the benchmark reports, by name: (description, source).
def reported():
    return [
        ("or_chains", "eight 9,000-operand || chains (1.4 MB of source)", chains("||", 8, 9000)),
        ("locals", "60,000 locals in one filter", many_locals(60000)),
    ]
