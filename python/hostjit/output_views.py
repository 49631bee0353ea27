"""hostjit.output_views - the tensors an imported Inductor graph returns,
made from the program's results and its arguments: an output that is a
buffer the program allocated is that result; any other is a view of a
result or of an input, its sizes, strides and offset computed per call from
the expressions the import gives (over the inputs' sizes and scalars), so
that one program serves every shape."""
import ast

from . import inductor


class OutputViews:
    """outs: the import's outputs (hostjit._hostjit._inductor_outputs: input
    or result, and expression texts); params: the program's parameter
    names, in the order a call passes them; symbols: the description's size
    symbols (name -> expression text); whole: per output, whether it is the
    buffer its result is (returned as it is). make(xs, results,
    convert, view, size, stride) gives the outputs of one call: xs, the
    arguments the program was given; results, what it returned (a tuple);
    convert(t), a result as the caller's tensor; view(base, sizes, strides,
    offset), a view at an offset in elements from base's first element;
    size(t, d) and stride(t, d), an argument's size and stride in
    elements."""

    def __init__(self, outs, params, symbols, whole):
        self.index = {n: k for k, n in enumerate(params)}
        self.symbols = symbols
        lines = ["def make(xs, rs, C, V, S, St):"]
        used = sorted({o["result"] for o in outs if o["result"] is not None})
        for r in used:
            lines.append("    r%d = C(rs[%d])" % (r, r))
        items = []
        for o, w in zip(outs, whole):
            if o["result"] is not None and w:
                items.append("r%d" % o["result"])
                continue
            base = "r%d" % o["result"] if o["result"] is not None else self.arg(o["input"])
            items.append("V(%s, (%s), (%s), %s)" % (base, "".join(self.expr(e) + ", " for e in o["sizes"]),
                                                     "".join(self.expr(e) + ", " for e in o["strides"]),
                                                     self.expr(o["offset"])))
        lines.append("    return (%s)" % "".join(i + ", " for i in items))
        scope = {}
        exec(compile("\n".join(lines), "<hostjit output views>", "exec"), scope)
        self.make = scope["make"]
        self.source = "\n".join(lines)

    def arg(self, name):
        if name not in self.index:
            raise inductor.Unsupported("an output lies in %s, which is not a parameter of the program" % name)
        return "xs[%d]" % self.index[name]

    def expr(self, text):
        try:
            node = ast.parse(text, mode="eval").body
        except SyntaxError:
            raise inductor.Unsupported("an output's geometry %r is no expression" % text) from None
        return self.node(node, text)

    def node(self, n, text):
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return str(n.value)
        if isinstance(n, ast.Name):
            if n.id in self.symbols and n.id not in self.index:
                return "(%s)" % self.expr(str(self.symbols[n.id]))
            return self.arg(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return "(-%s)" % self.node(n.operand, text)
        if isinstance(n, ast.BinOp):
            ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "//", ast.Mod: "%"}
            if type(n.op) in ops:
                return "(%s %s %s)" % (self.node(n.left, text), ops[type(n.op)], self.node(n.right, text))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
            f, a = n.func.id, n.args
            if f in ("size", "stride") and len(a) == 2 and isinstance(a[0], ast.Name) and \
                    isinstance(a[1], ast.Constant):
                return "%s(%s, %d)" % ("S" if f == "size" else "St", self.arg(a[0].id), a[1].value)
            if f == "ceildiv" and len(a) == 2:
                return "(-((-%s) // %s))" % (self.node(a[0], text), self.node(a[1], text))
            if f in ("min", "max") and len(a) == 2:
                return "%s(%s, %s)" % (f, self.node(a[0], text), self.node(a[1], text))
        raise inductor.Unsupported("an output's geometry %r: %s is not computed on the host" %
                                   (text, ast.unparse(n)))
