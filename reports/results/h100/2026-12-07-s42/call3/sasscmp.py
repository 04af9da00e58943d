import re, sys, hashlib
def funcs(path):
    out = {}; name = None; body = []
    for line in open(path):
        m = re.match(r'\s*Function : (\S+)', line)
        if m:
            if name: out[name] = body
            name = m.group(1); body = []; continue
        m = re.match(r'\s*/\*[0-9a-f]+\*/\s+(.*?);', line)
        if m and name: body.append(m.group(1).strip())
    if name: out[name] = body
    return {k: v for k, v in out.items() if 'BackwardTiled' in k}
base, s41b, new = funcs('/tmp/base.sass'), funcs('/tmp/s41b.sass'), funcs('/tmp/new.sass')
print(len(base), len(s41b), len(new))
def key_new(k):
    # BackwardTiled<..., kI, kStaged, kNormalLoop>: drop kNormalLoop
    m = re.search(r'Lb([01])EEENS_10TeamPolicy', k)
    return (k.replace(m.group(0), 'EENS_10TeamPolicy'), m.group(1))
same = diff = 0
for k, body in new.items():
    old, flag = key_new(k)
    ref = (s41b if flag == '1' else base).get(old)
    short = re.search(r'BackwardTiledINS_4CudaE(.*?)EENS_10', k).group(1)
    if ref is None: print('no ref', flag, short); continue
    if ref == body: same += 1
    else:
        diff += 1; print('DIFF', flag, short, len(ref), len(body))
print('same', same, 'diff', diff)
