"""A flame graph (SVG) from `perf script` output: each sample's stack folded root-first, widths
proportional to samples, hover titles with the share of samples. Written here because the usual
FlameGraph scripts are not packaged where this project installs from.

  perf script -i perf.data | python3 bench/peer/flamegraph.py --title "..." > out.svg
"""
import argparse
import collections
import hashlib
import html
import os
import re
import sys

WIDTH, ROW, FONT = 1200, 16, 11


def fold(lines):
    """{(root, ..., leaf): samples} from perf script's text (a header line, frames, a blank line)."""
    stacks, frames, in_sample = collections.Counter(), [], False
    for line in lines:
        if not line.strip():
            if frames:
                stacks[tuple(reversed(frames))] += 1
            frames, in_sample = [], False
            continue
        if not line.startswith((" ", "\t")):
            in_sample = True
            continue
        if in_sample:
            parts = line.strip().split(None, 1)
            name = parts[1] if len(parts) > 1 else parts[0]
            name = re.sub(r"\+0x[0-9a-f]+", "", name)            # offsets
            name = re.sub(r" \((/[^)]*/)?([^/)]*)\)$", r" [\2]", name)  # keep the object's file name
            frames.append(name)
    if frames:
        stacks[tuple(reversed(frames))] += 1
    return stacks


def summary(stacks, top=25):
    """Text: the share of samples whose leaf is in each object file, then the hottest leaf functions
    and the hottest frames anywhere on the stack (inclusive)."""
    total = sum(stacks.values()) or 1
    by_object, by_leaf, inclusive = collections.Counter(), collections.Counter(), collections.Counter()
    for stack, n in stacks.items():
        leaf = stack[-1]
        m = re.search(r"\[([^\]]*)\]$", leaf)
        by_object[m.group(1) if m else "?"] += n
        by_leaf[leaf] += n
        for name in set(stack):
            inclusive[name] += n
    out = [f"{total} samples"]
    for title, counter in (("self, by object", by_object), ("self, by function", by_leaf),
                           ("inclusive, by function", inclusive)):
        out.append(f"\n{title}:")
        out += [f"  {100 * n / total:5.1f}%  {name[:160]}" for name, n in counter.most_common(top)]
    return "\n".join(out) + "\n"


def color(name):
    h = int(hashlib.md5(name.encode()).hexdigest()[:6], 16)
    if "[libcpprest" in name:
        return f"rgb(90,{140 + h % 60},{200 + h % 50})"
    if "[libcrypto" in name or "[libssl" in name:
        return f"rgb({200 + h % 50},{120 + h % 60},200)"
    return f"rgb({205 + h % 50},{90 + h % 110},{40 + h % 40})"


def render(stacks, title):
    total = sum(stacks.values())
    tree = {}  # nested: name -> [count, children]
    for stack, n in stacks.items():
        node = tree
        for name in stack:
            entry = node.setdefault(name, [0, {}])
            entry[0] += n
            node = entry[1]
    depth = max((len(s) for s in stacks), default=0)
    height = (depth + 3) * ROW
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="monospace" '
           f'font-size="{FONT}">', f'<rect width="100%" height="100%" fill="#fdfdf6"/>',
           f'<text x="{WIDTH // 2}" y="{ROW}" text-anchor="middle" font-size="{FONT + 3}">{html.escape(title)} '
           f'({total} samples)</text>']

    def draw(node, x, level):
        for name, (count, children) in sorted(node.items()):
            w = count / total * (WIDTH - 20)
            if w >= 0.3:
                y = height - (level + 1) * ROW
                label = html.escape(name)
                out.append(f'<g><title>{label} ({count} samples, {100 * count / total:.2f}%)</title>'
                           f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{ROW - 1}" fill="{color(name)}"/>')
                chars = int(w / (FONT * 0.62))
                if chars >= 3:
                    text = name if len(name) <= chars else name[:chars - 2] + ".."
                    out.append(f'<text x="{x + 2:.1f}" y="{y + ROW - 4}">{html.escape(text)}</text>')
                out.append("</g>")
                draw(children, x, level + 1)
            x += w

    draw(tree, 10.0, 0)
    out.append("</svg>")
    return "\n".join(out)


def write(lines, svg_path, title):
    """The flame graph of `perf script` lines into svg_path, and summary() beside it (.txt)."""
    stacks = fold(lines)
    with open(svg_path, "w") as f:
        f.write(render(stacks, title))
    with open(os.path.splitext(svg_path)[0] + ".txt", "w") as f:
        f.write(summary(stacks))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--title", default="flame graph")
    a = ap.parse_args()
    sys.stdout.write(render(fold(sys.stdin), a.title))


if __name__ == "__main__":
    main()
