#!/usr/bin/python3
"""Trains the neural second stage of an offline classifier: a small byte-level CNN, exported to ONNX.

    /usr/bin/python3 scripts/detectors/train-neural.py --data DATA [--task prompt_injection]
        [--epochs 3] [--cv 4] [--benign-flagged 0.03] [--seed 1] [--out models] [--threads 1]
        [--oof FILE]

Needs Debian's python3-torch and python3-onnx (`apt-get install python3-torch python3-onnx`); the
server never runs Python: it reads the ONNX file with onnxruntime-node. DATA is what
prepare-data.mjs writes (`<task>.jsonl`, and `<task>.<name>.jsonl` beside it); DATA/measure (the
held-out measure sets) is never read.

The model reads UTF-8 bytes in windows of WINDOW bytes: embedding, three convolutions (ReLU, max
pooling by 2 after the first two), the maximum over positions, one logit. A message is read in
windows as a document is; its score is its worst window's. Training examples are windows: a
message's first WINDOW bytes; for a document with an instruction planted, the window around the
plant (found as the part where it differs from its clean twin) and, from the clean twin, a
window at a random position.

With --cv K the sources are split into K groups (by size, round robin); for each group a model
trained on the others scores that group's rows, and the pooled out-of-source scores choose the
operating point: the score that flags `--benign-flagged` of the left-out benign messages. The
model trained on every source is then written with that point as its threshold: the exported
score is sigmoid(logit - logit_at_operating_point), so that 0.5 is the operating point. Writes
`<out>/<task>.onnx`, `<out>/<task>.onnx.json` (sources, figures, operating point, SHA-256 of the
ONNX file) and prints the figures. With --oof FILE the cross-validation's scores are kept: each
row (its source, label, reading, text), the fold its source was left out in and the logit the
network trained without that fold gave it; scripts/detectors/operating-point.mjs reads them.
"""
import argparse
import hashlib
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

WINDOW = 512
STRIDE = 384
MAX_PLANT = 400


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--data', required=True)
    p.add_argument('--task', default='prompt_injection')
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--cv', type=int, default=0)
    p.add_argument('--cv-epochs', type=int, default=2)
    p.add_argument('--benign-flagged', type=float, default=0.03)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--out', default='models')
    p.add_argument('--threads', type=int, default=1)
    p.add_argument('--cap', type=int, default=4000, help='most rows kept per source and label')
    p.add_argument('--oof', help='with --cv: write each row\'s left-out logit here (JSON Lines)')
    return p.parse_args()


def read_rows(data, task):
    rows = []
    for name in sorted(os.listdir(data)):
        if name == f'{task}.jsonl' or (name.startswith(f'{task}.') and name.endswith('.jsonl')):
            with open(os.path.join(data, name), encoding='utf-8') as f:
                for line in f:
                    if line.strip():
                        r = json.loads(line)
                        if isinstance(r.get('text'), str) and r.get('label') in (0, 1):
                            rows.append(r)
    return rows


def plant_span(text, twin):
    """Where `text` differs from its clean twin, or None when the difference is not a plant."""
    start = 0
    while start < len(twin) and start < len(text) and twin[start] == text[start]:
        start += 1
    tail = 0
    while tail < len(twin) - start and tail < len(text) - start and twin[-1 - tail] == text[-1 - tail]:
        tail += 1
    end = len(text) - tail
    if end <= start or end - start > MAX_PLANT:
        return None
    return start, end


def window_around(data, start, end, rng):
    """A WINDOW-byte window of `data` holding bytes [start, end), at a random offset."""
    if len(data) <= WINDOW:
        return data
    lo = max(0, end - WINDOW)
    hi = min(start, len(data) - WINDOW)
    at = rng.randint(lo, hi) if hi >= lo else max(0, min(start, len(data) - WINDOW))
    return data[at:at + WINDOW]


def examples(rows, rng):
    """(bytes, label, row index) windows to train on or score."""
    key = lambda r: (r['source'], (r.get('origin') or {}).get('path'), (r.get('origin') or {}).get('row'))
    clean = {key(r): r['text'] for r in rows if r.get('reading') == 'document' and r['label'] == 0}
    out = []
    for i, r in enumerate(rows):
        data = r['text'].encode('utf-8')
        if r.get('reading') == 'document':
            if r['label'] == 1:
                twin = clean.get(key(r))
                span = plant_span(r['text'], twin) if twin is not None else None
                if span is None:
                    continue
                s = len(r['text'][:span[0]].encode('utf-8'))
                e = len(r['text'][:span[1]].encode('utf-8'))
                out.append((window_around(data, s, e, rng), 1, i))
            else:
                at = rng.randint(0, max(0, len(data) - WINDOW))
                out.append((data[at:at + WINDOW], 0, i))
        else:
            out.append((data[:WINDOW], r['label'], i))
    return out


def windows(data):
    """The windows a text is scored in: WINDOW bytes every STRIDE bytes, the last one ending the text."""
    if len(data) <= WINDOW:
        return [data]
    starts = list(range(0, len(data) - WINDOW, STRIDE)) + [len(data) - WINDOW]
    return [data[s:s + WINDOW] for s in starts]


class ByteCNN(nn.Module):
    def __init__(self, emb=24, c1=64, c2=96, c3=128):
        super().__init__()
        self.embed = nn.Embedding(257, emb, padding_idx=0)
        self.conv1 = nn.Conv1d(emb, c1, 5, padding=2)
        self.conv2 = nn.Conv1d(c1, c2, 5, padding=2)
        self.conv3 = nn.Conv1d(c2, c3, 3, padding=1)
        self.drop = nn.Dropout(0.2)
        self.out = nn.Linear(c3, 1)

    def forward(self, x, mask=None):
        # x: [batch, length] of byte + 1 (0 pads); mask: [batch, 1, length] (1 where a byte is)
        h = self.embed(x).transpose(1, 2)
        h = F.relu(self.conv1(h))
        if mask is not None:
            h = h * mask
            mask = F.max_pool1d(mask, 2, ceil_mode=True)
        h = F.max_pool1d(h, 2, ceil_mode=True)
        h = F.relu(self.conv2(h))
        if mask is not None:
            h = h * mask
            mask = F.max_pool1d(mask, 2, ceil_mode=True)
        h = F.max_pool1d(h, 2, ceil_mode=True)
        h = F.relu(self.conv3(h))
        if mask is not None:
            h = h * mask  # ReLU outputs are >= 0: masked positions never win the maximum
        h = h.max(dim=2).values
        return self.out(self.drop(h)).squeeze(1)


def batchify(items):
    length = max(1, max(len(b) for b, _ in items))
    x = torch.zeros(len(items), length, dtype=torch.long)
    m = torch.zeros(len(items), 1, length)
    y = torch.zeros(len(items))
    for j, (b, label) in enumerate(items):
        if b:
            x[j, :len(b)] = torch.tensor(list(b), dtype=torch.long) + 1
            m[j, 0, :len(b)] = 1
        y[j] = label
    return x, m, y


def batches(items, size, rng, shuffle):
    """Batches of items of similar length (fewer padded positions), in random order when training."""
    order = sorted(range(len(items)), key=lambda i: (len(items[i][0]), rng.random() if shuffle else i))
    groups = [order[i:i + size] for i in range(0, len(order), size)]
    if shuffle:
        rng.shuffle(groups)
    return groups


def train(items, epochs, seed, log=''):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = ByteCNN()
    pos = sum(1 for _, y in items if y == 1)
    neg = len(items) - pos
    weight = torch.tensor(neg / max(1, pos))  # positives weigh as much as negatives in all
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    steps = epochs * math.ceil(len(items) / 64)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    started = time.time()
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for group in batches(items, 64, rng, True):
            x, m, y = batchify([items[i] for i in group])
            logit = model(x, m)
            loss = F.binary_cross_entropy_with_logits(logit, y, pos_weight=weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(group)
        print(f'{log}epoch {epoch + 1}/{epochs}: loss {total / len(items):.4f} ({time.time() - started:.0f} s)', flush=True)
    model.eval()
    return model


@torch.no_grad()
def score_texts(model, texts):
    """Each text's raw logit: its worst window's."""
    flat = []
    owner = []
    for i, t in enumerate(texts):
        for w in windows(t.encode('utf-8')):
            flat.append((w, 0))
            owner.append(i)
    out = [-1e9] * len(texts)
    rng = random.Random(0)
    for group in batches(flat, 256, rng, False):
        x, m, _ = batchify([flat[i] for i in group])
        logits = model(x, m).tolist()
        for j, i in enumerate(group):
            o = owner[i]
            out[o] = max(out[o], logits[j])
    return out


def auc(scores, labels):
    pairs = sorted(zip(scores, labels))
    pos = sum(labels)
    neg = len(labels) - pos
    if pos == 0 or neg == 0:
        return None
    rank_sum = 0.0
    i = 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        avg = (i + j + 1) / 2
        rank_sum += avg * sum(1 for k in range(i, j) if pairs[k][1] == 1)
        i = j
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def recall_at(scores, labels, benign_flagged):
    """Recall when the threshold flags `benign_flagged` of the benign rows."""
    neg = sorted((s for s, l in zip(scores, labels) if l == 0), reverse=True)
    pos = [s for s, l in zip(scores, labels) if l == 1]
    if not neg or not pos:
        return None
    k = int(math.floor(benign_flagged * len(neg)))
    t = neg[k] if k < len(neg) else -1e9
    return sum(1 for s in pos if s > t) / len(pos)


def threshold_for(scores, benign_flagged):
    neg = sorted(scores, reverse=True)
    k = int(math.floor(benign_flagged * len(neg)))
    return neg[min(k, len(neg) - 1)]


def cap_rows(rows, cap, rng):
    by = {}
    for r in rows:
        by.setdefault((r['source'], r['label'], r.get('reading')), []).append(r)
    out = []
    for k in sorted(by, key=str):
        group = by[k]
        if r_is_doc(group[0]):
            out.extend(group)  # planted and clean twins stay together
        else:
            rng.shuffle(group)
            out.extend(group[:cap])
    return out


def r_is_doc(r):
    return r.get('reading') == 'document'


class Exported(nn.Module):
    """What the ONNX file computes: bytes [1, length] (byte + 1) to the calibrated score [1]."""

    def __init__(self, model, shift):
        super().__init__()
        self.model = model
        self.shift = shift

    def forward(self, x):
        return torch.sigmoid(self.model(x) - self.shift)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    rows = [r for r in read_rows(args.data, args.task)]
    rows = cap_rows(rows, args.cap, rng)
    sources = sorted({r['source'] for r in rows})
    print(f'{len(rows)} rows from {len(sources)} sources', flush=True)
    report = {'task': args.task, 'window': WINDOW, 'stride': STRIDE, 'seed': args.seed}
    started = time.time()
    shift = 0.0
    if args.cv:
        sizes = {}
        for r in rows:
            sizes[r['source']] = sizes.get(r['source'], 0) + 1
        order = sorted(sources, key=lambda s: -sizes[s])
        # A document source and its twins go together; doc-* sources share their planted strings.
        group_of = {}
        docs = [s for s in order if s.startswith('doc-')]
        others = [s for s in order if not s.startswith('doc-')]
        for i, s in enumerate(others):
            group_of[s] = i % args.cv
        for s in docs:
            group_of[s] = args.cv - 1
        oof = {}
        for g in range(args.cv):
            train_rows = [r for r in rows if group_of[r['source']] != g]
            test_idx = [i for i, r in enumerate(rows) if group_of[r['source']] == g]
            left = sorted({rows[i]['source'] for i in test_idx})
            items = [(b, y) for b, y, _ in examples(train_rows, rng)]
            print(f'fold {g + 1}/{args.cv}: {len(items)} windows, left out: {", ".join(left)}', flush=True)
            model = train(items, args.cv_epochs, args.seed + g, log=f'  fold {g + 1} ')
            scores = score_texts(model, [rows[i]['text'] for i in test_idx])
            for i, s in zip(test_idx, scores):
                oof[i] = s
        if args.oof:
            with open(args.oof, 'w', encoding='utf-8') as f:
                for i in sorted(oof):
                    r = rows[i]
                    f.write(json.dumps({
                        'source': r['source'], 'label': r['label'], 'reading': r.get('reading'),
                        'fold': group_of[r['source']], 'logit': oof[i], 'text': r['text'],
                    }, ensure_ascii=False) + '\n')
        benign = [oof[i] for i, r in enumerate(rows) if r['label'] == 0 and not r_is_doc(r)]
        shift = threshold_for(benign, args.benign_flagged)
        per_source = []
        for s in sources:
            idx = [i for i, r in enumerate(rows) if r['source'] == s]
            sc = [oof[i] for i in idx]
            lb = [rows[i]['label'] for i in idx]
            pos = sum(lb)
            per_source.append({
                'source': s,
                'n': len(idx),
                'positives': pos,
                'flagged': sum(1 for x in sc if x > shift) / len(sc),
                'auc': auc(sc, lb),
                'recall_at_1': recall_at(sc, lb, 0.01),
                'recall_at_5': recall_at(sc, lb, 0.05),
            })
        allidx = list(oof)
        sc = [oof[i] for i in allidx]
        lb = [rows[i]['label'] for i in allidx]
        report['cv'] = {
            'folds': args.cv,
            'epochs': args.cv_epochs,
            'groups': group_of,
            'per_source': per_source,
            'pooled': {
                'auc': auc(sc, lb),
                'recall_at_1': recall_at(sc, lb, 0.01),
                'recall_at_5': recall_at(sc, lb, 0.05),
            },
            'operating_point': {
                'benign_flagged': args.benign_flagged,
                'logit': shift,
                'recall': sum(1 for x, l in zip(sc, lb) if l == 1 and x > shift) / max(1, sum(lb)),
            },
        }
        print(json.dumps(report['cv'], indent=1), flush=True)
    cv_seconds = time.time() - started
    items = [(b, y) for b, y, _ in examples(rows, rng)]
    print(f'final: {len(items)} windows', flush=True)
    model = train(items, args.epochs, args.seed, log='  final ')
    train_seconds = time.time() - started - cv_seconds
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f'{args.task}.onnx')
    exported = Exported(model, shift).eval()
    torch.onnx.export(
        exported,
        torch.ones(1, 64, dtype=torch.long),
        path,
        input_names=['bytes'],
        output_names=['score'],
        dynamic_axes={'bytes': {1: 'length'}},
        opset_version=13,
    )
    with open(path, 'rb') as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    counts = {}
    for r in rows:
        c = counts.setdefault(r['source'], [0, 0])
        c[r['label']] += 1
    report.update({
        'format': 'onnx',
        'input': 'bytes: int64 [1, length], each UTF-8 byte + 1, length 1 to 512',
        'output': 'score: float [1], the probability; 0.5 is the operating point',
        'sha256': digest,
        'parameters': sum(p.numel() for p in model.parameters()),
        'epochs': args.epochs,
        'threads': args.threads,
        'training_seconds': round(train_seconds),
        'cv_seconds': round(cv_seconds),
        'rows': {s: {'positives': c[1], 'negatives': c[0]} for s, c in sorted(counts.items())},
        'torch': torch.__version__,
    })
    with open(f'{path}.json', 'w') as f:
        json.dump(report, f, indent=2)
        f.write('\n')
    print(f'wrote {path} ({os.path.getsize(path)} bytes, sha256 {digest}); '
          f'{report["parameters"]} parameters, trained in {train_seconds:.0f} s (cv {cv_seconds:.0f} s)')


if __name__ == '__main__':
    sys.exit(main())
