// save_graph / load_graph: the pending graph as JSON ("kiln-graph", version 1)
//
//   {"format": "kiln-graph", "version": 1,
//    "nodes": [{"id": 0, "op": "Buffer", "dtype": "float32", "device": "cpu",
//               "shape": [100, 1], "inputs": [], "ints": [], "reals": [],
//               "loc": {"file": "train.cpp", "line": 12}}, ...],
//    (and "store": true on a node always stored by its own kernel)
//    "outputs": [7]}
//
// Nodes are in topological order (inputs first), ids are positions. Nodes
// that already have values are saved as Buffer leaves, without their data.
// Reals that are not finite are the strings "nan", "inf", "-inf". "loc" is
// omitted when unknown. Loading checks everything (graph_check.cpp).
#include <algorithm>
#include <climits>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "jit/graph_check.h"
#include "jit/inspect.h"
#include "jit/json.h"
#include "kiln/error.h"

namespace kiln::jit {

namespace {
constexpr int kVersion = 1;

void ints_json(std::ostringstream& os, const Shape& v) {
  os << '[';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ']';
}
}  // namespace

std::string graph_to_json(const GraphView& g, bool locations) {
  std::ostringstream os;
  os << "{\"format\": \"kiln-graph\", \"version\": " << kVersion << ",\n \"nodes\": [\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = *g.nodes[i];
    const bool leaf = has_value(n);
    os << "  {\"id\": " << i << ", \"op\": " << json::quote(leaf ? "Buffer" : op_name(n.op))
       << ", \"dtype\": " << json::quote(short_dtype(n.dtype)) << ", \"device\": " << json::quote(n.device.str())
       << ", \"shape\": ";
    ints_json(os, n.shape);
    os << ", \"inputs\": [";
    if (!leaf)
      for (size_t j = 0; j < n.inputs.size(); ++j) os << (j ? ", " : "") << g.id(n.inputs[j].get());
    os << "], \"ints\": ";
    ints_json(os, leaf ? Shape{} : n.attrs.ints);
    os << ", \"reals\": [";
    if (!leaf)
      for (size_t j = 0; j < n.attrs.reals.size(); ++j) os << (j ? ", " : "") << json::number(n.attrs.reals[j]);
    os << ']';
    if (!leaf && n.store) os << ", \"store\": true";
    const Loc l = g.loc(&n);
    if (locations && !l.empty())
      os << ", \"loc\": {\"file\": " << json::quote(l.file) << ", \"line\": " << l.line << '}';
    os << (i + 1 < g.nodes.size() ? "},\n" : "}\n");
  }
  os << " ],\n \"outputs\": [";
  for (size_t i = 0; i < g.roots.size(); ++i) os << (i ? ", " : "") << g.id(g.roots[i].get());
  os << "]}\n";
  return os.str();
}

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  KILN_FAIL("load_graph", where, ": ", what);
}

const json::Value& member(const json::Value& obj, const char* key, json::Kind kind, const std::string& where) {
  const json::Value* v = obj.find(key);
  if (!v) bad(where, std::string("missing \"") + key + "\"");
  if (v->kind != kind) bad(where, std::string("\"") + key + "\" has the wrong type");
  return *v;
}

int64_t int_in(const json::Value& v, int64_t lo, int64_t hi, const std::string& where) {
  if (v.kind != json::Kind::Int) bad(where, "expected an integer");
  if (v.integer < lo || v.integer > hi)
    bad(where, std::to_string(v.integer) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v.integer;
}

double real_of(const json::Value& v, const std::string& where) {
  if (v.kind == json::Kind::Int || v.kind == json::Kind::Real) return v.real;
  if (v.kind == json::Kind::String) {
    if (v.string == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (v.string == "inf") return std::numeric_limits<double>::infinity();
    if (v.string == "-inf") return -std::numeric_limits<double>::infinity();
  }
  bad(where, "expected a number");
}

Op op_named(const std::string& s, const std::string& where) {
#define KILN_OP_NAMED(name, cls, arity) \
  if (s == #name) return Op::name;
  KILN_FORALL_OPS(KILN_OP_NAMED)
#undef KILN_OP_NAMED
  bad(where, "unknown op \"" + s.substr(0, 64) + "\"");
}

DType dtype_named(const std::string& s, const std::string& where) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (short_dtype(static_cast<DType>(i)) == s) return static_cast<DType>(i);
  bad(where, "unknown dtype \"" + s.substr(0, 64) + "\"");
}

Device device_named(const std::string& s, const std::string& where) {
  if (s == "cpu") return Device();
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5 && s.size() <= 8 &&
      s.find_first_not_of("0123456789", 5) == std::string::npos)
    return Device(DeviceType::CUDA, std::stoi(s.substr(5)));
  bad(where, "unknown device \"" + s.substr(0, 64) + "\"");
}

const char* kNodeKeys[] = {"id", "op", "dtype", "device", "shape", "inputs", "ints", "reals", "store", "loc"};

}  // namespace

GraphView graph_from_json(std::string_view text) {
  const json::Value doc = json::parse(text);
  if (doc.kind != json::Kind::Object) bad("the file", "is not a JSON object");
  const json::Value& format = member(doc, "format", json::Kind::String, "the file");
  if (format.string != "kiln-graph") bad("the file", "\"format\" is not \"kiln-graph\"");
  if (int_in(member(doc, "version", json::Kind::Int, "the file"), 0, 1 << 30, "\"version\"") != kVersion)
    bad("the file", "version " + std::to_string(doc.find("version")->integer) + " is not supported (this kiln reads " +
                        std::to_string(kVersion) + ")");
  const json::Value& jnodes = member(doc, "nodes", json::Kind::Array, "the file");
  if (jnodes.items.size() > kMaxLoadedNodes)
    bad("the file", std::to_string(jnodes.items.size()) + " nodes, over the limit of " + std::to_string(kMaxLoadedNodes));

  std::vector<NodePtr> nodes;
  std::unordered_map<const Node*, Loc> locs;
  nodes.reserve(jnodes.items.size());
  for (size_t i = 0; i < jnodes.items.size(); ++i) {
    const json::Value& jn = jnodes.items[i];
    const std::string where = "node " + std::to_string(i);
    if (jn.kind != json::Kind::Object) bad(where, "is not an object");
    for (const auto& [key, v] : jn.members)
      if (std::find(std::begin(kNodeKeys), std::end(kNodeKeys), key) == std::end(kNodeKeys))
        bad(where, "unknown member \"" + key.substr(0, 64) + "\"");
    if (int_in(member(jn, "id", json::Kind::Int, where), 0, INT64_MAX, where + " id") != static_cast<int64_t>(i))
      bad(where, "ids must be 0, 1, 2, ... in order");
    const Op op = op_named(member(jn, "op", json::Kind::String, where).string, where);
    const DType dtype = dtype_named(member(jn, "dtype", json::Kind::String, where).string, where);
    const Device device = device_named(member(jn, "device", json::Kind::String, where).string, where);
    const json::Value& jshape = member(jn, "shape", json::Kind::Array, where);
    if (jshape.items.size() > kMaxLoadedRank) bad(where, "rank over " + std::to_string(kMaxLoadedRank));
    Shape shape;
    int64_t numel = 1;
    for (const json::Value& d : jshape.items) {
      const int64_t s = int_in(d, 0, kMaxLoadedNumel, where + " shape");
      if (s != 0 && numel > kMaxLoadedNumel / s)
        bad(where, "more than " + std::to_string(kMaxLoadedNumel) + " elements");
      numel *= s;
      shape.push_back(s);
    }
    NodeList inputs;
    for (const json::Value& in : member(jn, "inputs", json::Kind::Array, where).items)
      inputs.push_back(nodes[static_cast<size_t>(int_in(in, 0, static_cast<int64_t>(i) - 1, where + " input"))]);
    Attrs attrs;
    const json::Value& jints = member(jn, "ints", json::Kind::Array, where);
    const json::Value& jreals = member(jn, "reals", json::Kind::Array, where);
    if (jints.items.size() > kMaxLoadedAttrs || jreals.items.size() > kMaxLoadedAttrs) bad(where, "too many attributes");
    for (const json::Value& v : jints.items) attrs.ints.push_back(int_in(v, INT64_MIN, INT64_MAX, where + " ints"));
    for (const json::Value& v : jreals.items) attrs.reals.push_back(real_of(v, where + " reals"));
    if (op == Op::Buffer && (!inputs.empty() || !attrs.ints.empty() || !attrs.reals.empty()))
      bad(where, "a Buffer has no inputs or attributes");
    bool store = false;
    if (const json::Value* js = jn.find("store")) {
      if (js->kind != json::Kind::Bool) bad(where, "\"store\" is not true or false");
      store = js->boolean;
    }
    check_loaded_node(static_cast<int64_t>(i), op, dtype, shape, inputs, attrs);
    NodePtr n = make_node(op, dtype, device, std::move(shape), std::move(inputs), std::move(attrs), store);
    if (n->depth > kMaxLoadedDepth) bad(where, "the graph is deeper than " + std::to_string(kMaxLoadedDepth) + " nodes");
    if (const json::Value* jl = jn.find("loc")) {
      if (jl->kind != json::Kind::Object) bad(where, "\"loc\" is not an object");
      Loc l;
      l.file = member(*jl, "file", json::Kind::String, where + " loc").string;
      l.line = static_cast<uint32_t>(int_in(member(*jl, "line", json::Kind::Int, where + " loc"), 0, UINT32_MAX, where + " loc"));
      locs.emplace(n.get(), std::move(l));
    }
    nodes.push_back(std::move(n));
  }
  const json::Value& jout = member(doc, "outputs", json::Kind::Array, "the file");
  if (jout.items.empty()) bad("the file", "no outputs");
  if (jout.items.size() > kMaxLoadedNodes) bad("the file", "too many outputs");
  std::vector<NodePtr> roots;
  std::unordered_set<const Node*> seen;
  for (const json::Value& o : jout.items) {
    const NodePtr& n = nodes[static_cast<size_t>(int_in(o, 0, static_cast<int64_t>(nodes.size()) - 1, "an output"))];
    if (seen.insert(n.get()).second) roots.push_back(n);  // once each, as save_graph writes them
  }
  GraphView g = view_graph(std::move(roots));
  g.loaded = true;
  for (const Node* n : g.nodes) {
    auto it = locs.find(n);
    g.loaded_locs.emplace(n, it == locs.end() ? Loc{} : it->second);
  }
  return g;
}

}  // namespace kiln::jit
