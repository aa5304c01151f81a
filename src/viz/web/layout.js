'use strict';
// Graph layout for VIZ's page. A graph is n boxes (w, h) and, for each box, the boxes it reads (its
// sources); box indices are in topological order (sources before users) and the last box is the root.
// Sources are drawn above their users, the root at the bottom.
//
// dagre (Debian's python3-xstatic-dagre) lays small graphs out well, but it adds a dummy node on every
// layer an edge crosses and its crossing minimization grows fast with them: a 1000-op chain takes it
// seconds, and a constant read at every depth of a 200-node chain over ten. So graphs whose dagre work
// (nodes plus dummy nodes) is above DAGRE_MAX_WORK get our own layered layout instead: layers by
// longest path to the root, a few barycenter sweeps to order each layer, and x from the neighbours'
// positions. It is linear in the edges per sweep (no dummy nodes: a long edge is drawn straight
// across), so thousands of nodes lay out in milliseconds.
const VizLayout = (() => {
  const DAGRE_MAX_WORK = 300;
  const NODE_GAP = 14, LAYER_GAP = 30;

  // Each box's layer: its longest path to the root (root = 0), so a box sits just above its farthest user.
  function layersOf(n, srcs) {
    const layer = new Int32Array(n);
    for (let i = n - 1; i >= 0; i--) for (const s of srcs[i]) if (layer[s] < layer[i] + 1) layer[s] = layer[i] + 1;
    return layer;
  }

  function dagreWork(n, srcs, layer) {
    let work = n;
    for (let i = 0; i < n; i++) for (const s of srcs[i]) work += layer[s] - layer[i] - 1;
    return work;
  }

  function users(n, srcs) {
    const u = Array.from({length: n}, () => []);
    for (let i = 0; i < n; i++) for (const s of srcs[i]) u[s].push(i);
    return u;
  }

  // Packs one layer's boxes (in order) as close to their wanted x as they fit, then shifts the layer so
  // that on average the boxes are where they want to be.
  function place(row, want, boxes, x) {
    let right = -Infinity, drift = 0;
    for (const v of row) {
      const half = boxes[v].w / 2;
      x[v] = Math.max(want[v], right + NODE_GAP + half);
      right = x[v] + half;
      drift += want[v] - x[v];
    }
    const shift = drift / row.length;
    for (const v of row) x[v] += shift;
  }

  function layered(boxes, srcs) {
    const n = boxes.length, root = n - 1, layer = layersOf(n, srcs), us = users(n, srcs);
    let depth = 0;
    for (let i = 0; i < n; i++) depth = Math.max(depth, layer[i]);
    // initial order: depth-first from the root, sources in order (left to right as they are read)
    const order = new Float64Array(n).fill(-1);
    let next = 0;
    const stack = [root];
    while (stack.length) {
      const v = stack.pop();
      if (order[v] >= 0) continue;
      order[v] = next++;
      for (let k = srcs[v].length - 1; k >= 0; k--) if (order[srcs[v][k]] < 0) stack.push(srcs[v][k]);
    }
    const rows = Array.from({length: depth + 1}, () => []);
    for (let v = 0; v < n; v++) rows[layer[v]].push(v);
    const pos = new Float64Array(n);  // position within the layer, scaled to [0, 1]
    const sortRow = (row, key) => {
      row.sort((a, b) => key[a] - key[b]);
      row.forEach((v, i) => { pos[v] = (i + 0.5) / row.length; });
    };
    for (const row of rows) sortRow(row, order);
    // barycenter sweeps: away from the root by the users' positions, back by the sources'
    const bary = new Float64Array(n);
    const sweep = (from, to, step, nbrs) => {
      for (let L = from; L !== to; L += step) {
        for (const v of rows[L]) {
          const nb = nbrs[v];
          if (!nb.length) { bary[v] = pos[v]; continue; }
          let s = 0;
          for (const w of nb) s += pos[w];
          bary[v] = s / nb.length;
        }
        sortRow(rows[L], bary);
      }
    };
    for (let it = 0; it < 2; it++) {
      sweep(1, depth + 1, 1, us);
      sweep(depth - 1, -1, -1, srcs);
    }
    // x: outward from the root under the users, then inward so each user sits under its sources
    const x = new Float64Array(n), want = new Float64Array(n);
    const mean = (v, nb) => { let s = 0; for (const w of nb) s += x[w]; return nb.length ? s / nb.length : x[v]; };
    for (let L = 0; L <= depth; L++) {
      for (const v of rows[L]) want[v] = L === 0 ? 0 : mean(v, us[v]);
      place(rows[L], want, boxes, x);
    }
    for (let L = depth - 1; L >= 0; L--) {
      for (const v of rows[L]) want[v] = mean(v, srcs[v]);
      place(rows[L], want, boxes, x);
    }
    // y: layer by layer, the deepest on top
    const y = new Float64Array(n);
    let top = 0;
    for (let L = depth; L >= 0; L--) {
      let h = 0;
      for (const v of rows[L]) h = Math.max(h, boxes[v].h);
      for (const v of rows[L]) y[v] = top + h / 2;
      top += h + LAYER_GAP;
    }
    return {x, y};
  }

  function withDagre(boxes, srcs) {
    const g = new dagre.graphlib.Graph();
    g.setGraph({rankdir: 'TB', nodesep: NODE_GAP, ranksep: LAYER_GAP, edgesep: 8});
    g.setDefaultEdgeLabel(() => ({}));
    boxes.forEach((b, i) => g.setNode(String(i), {width: b.w, height: b.h}));
    srcs.forEach((ss, i) => ss.forEach(s => g.setEdge(String(s), String(i))));  // one edge per pair: x*x draws two
    dagre.layout(g);
    const n = boxes.length, x = new Float64Array(n), y = new Float64Array(n);
    for (let i = 0; i < n; i++) { const p = g.node(String(i)); x[i] = p.x; y[i] = p.y; }
    return {x, y};
  }

  // Returns {x, y (box centres), width, height, engine, ms}.
  function layout(boxes, srcs) {
    const t0 = performance.now(), n = boxes.length;
    const small = typeof dagre !== 'undefined' && dagreWork(n, srcs, layersOf(n, srcs)) <= DAGRE_MAX_WORK;
    const {x, y} = small ? withDagre(boxes, srcs) : layered(boxes, srcs);
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (let i = 0; i < n; i++) {
      x0 = Math.min(x0, x[i] - boxes[i].w / 2); x1 = Math.max(x1, x[i] + boxes[i].w / 2);
      y0 = Math.min(y0, y[i] - boxes[i].h / 2); y1 = Math.max(y1, y[i] + boxes[i].h / 2);
    }
    for (let i = 0; i < n; i++) { x[i] -= x0; y[i] -= y0; }
    return {x, y, width: x1 - x0, height: y1 - y0, engine: small ? 'dagre' : 'layered', ms: performance.now() - t0};
  }

  return {layout};
})();
