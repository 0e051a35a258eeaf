#include "rules/runtime_rewrite.h"

#include <algorithm>

#include "edits/helpers.h"
#include "edits/tree_query.h"
#include "rules/predication.h"

namespace gm::rules::runtime_rewrite {

using ast::NodeId;
using ast::NodeKind;

void for_each_region_call(const lint::RuleContext& ctx, const std::function<void(NodeId call)>& f) {
  const sema::Model* model = ctx.model();
  if (model == nullptr) return;
  const auto& tree = ctx.tree();
  for (NodeId n : model->region_nodes())
    if (tree.kind(n) == NodeKind::Call) f(n);
}

std::string runtime_alias_clash(const sema::Model& model) {
  for (const auto& b : model.bindings()) {
    if (b.name != kRuntimeAlias) continue;
    if (b.kind == sema::BindingKind::Import && b.qualified == kRuntimeModule) continue;
    return "`_graphmend_rt` is already bound to something else in this file";
  }
  return {};
}

std::optional<edits::Edit> runtime_import(const lint::RuleContext& ctx) {
  return ctx.insert_import(
      edits::ImportSpec::import_module(std::string(kRuntimeModule), std::string(kRuntimeAlias)));
}

std::uint32_t skip_blank(std::string_view text, std::uint32_t i, std::uint32_t stop,
                         bool closing_parens) {
  while (i < stop) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\\' ||
        (closing_parens && c == ')')) {
      ++i;
    } else if (c == '#') {
      while (i < stop && text[i] != '\n' && text[i] != '\r') ++i;
    } else {
      break;
    }
  }
  return i;
}

std::optional<std::uint32_t> open_paren(const lint::RuleContext& ctx, NodeId call) {
  const auto& tree = ctx.tree();
  const std::uint32_t stop = tree.at(call).end;
  const std::uint32_t i =
      skip_blank(ctx.text(), tree.at(tree.child(call, GM_F(Call, func))).end, stop, false);
  if (i < stop && ctx.text()[i] == '(') return i;
  return std::nullopt;
}

NodeId keyword(const ast::Tree& tree, NodeId call, std::string_view name) {
  for (NodeId k : tree.children(call, GM_F(Call, keywords))) {
    const auto f = tree.field(k, GM_F(keyword, arg));
    if (!ast::Tree::is_none_string(f) && tree.text(f) == name) return k;
  }
  return {};
}

bool has_double_star(const ast::Tree& tree, NodeId call) {
  for (NodeId k : tree.children(call, GM_F(Call, keywords)))
    if (ast::Tree::is_none_string(tree.field(k, GM_F(keyword, arg)))) return true;
  return false;
}

bool is_falsy_literal(const lint::RuleContext& ctx, NodeId value) {
  if (ctx.tree().kind(value) != NodeKind::Constant) return false;
  const auto t = ctx.text_of(value);
  return t == "False" || t == "None" || t == "0";
}

namespace {

constexpr std::string_view kConversions[] = {"int", "float", "bool", "complex"};

// `t.item()` or `int(t)`-like: the runtime call text, else empty.
std::string item_text(const lint::RuleContext& ctx, NodeId e) {
  const auto& tree = ctx.tree();
  if (tree.kind(e) != NodeKind::Call || !tree.children(e, GM_F(Call, keywords)).empty()) return {};
  const auto args = tree.children(e, GM_F(Call, args));
  const NodeId func = tree.child(e, GM_F(Call, func));
  const std::string rt(kRuntimeAlias);
  if (tree.kind(func) == NodeKind::Attribute && args.empty() &&
      tree.text(tree.field(func, GM_F(Attribute, attr))) == "item") {
    const NodeId recv = tree.child(func, GM_F(Attribute, value));
    if (ctx.model()->fact(recv).kind == sema::TensorKind::NotTensor) return {};
    return rt + ".item(" + std::string(ctx.text_of(recv)) + ")";
  }
  if (tree.kind(func) == NodeKind::Name && args.size() == 1 &&
      tree.kind(args[0]) != NodeKind::Starred) {
    const auto q = ctx.model()->qualified_name(func);
    if (!q || !q->starts_with("builtins.")) return {};
    const std::string_view conv = std::string_view(*q).substr(9);
    for (std::string_view c : kConversions) {
      if (c != conv) continue;
      // `float(width)` of a Python number stays as written.
      if (!predication::tensor_evidence(ctx, args[0])) return {};
      // The callee's own text (it is the builtin): `float` stays `float`.
      return rt + ".item(" + std::string(ctx.text_of(args[0])) + ", " +
             std::string(ctx.text_of(func)) + ")";
    }
  }
  return {};
}

// Whether a tensor read (`.item()`, `float(t)`, ...) is somewhere inside `e`.
bool contains_read(const lint::RuleContext& ctx, NodeId e) {
  if (!item_text(ctx, e).empty()) return true;
  bool found = false;
  edits::for_each_child(ctx.tree(), e, [&](NodeId c) { found = found || contains_read(ctx, c); });
  return found;
}

// How the values of a formatted string are passed: to `fmt` (deferred
// reads: `.item()` becomes `_graphmend_rt.item(t)`, and only worth it when a
// value reads tensor data) or to `message` (a trap's argument, formatted
// only when it raises: a `.item()` would be a read on every call, so none is
// taken; the values are collected for the caller's purity check).
struct Formatting {
  std::string_view fn = "fmt", fn_percent = "fmt_percent";
  bool lazy = false;                      // message / message_percent
  std::vector<NodeId>* values = nullptr;  // lazy: every value expression
};

// A value as `fmt` receives it: its item() form, or its own text
// (parenthesised where it would not be one argument on its own); nullopt
// when a read is inside it (`loss.item() * 100`: Python needs the number at
// the call, so formatting later gains nothing).
std::optional<std::string> value_text(const lint::RuleContext& ctx, NodeId e, bool& reads,
                                      const Formatting& how) {
  if (how.lazy) {
    if (contains_read(ctx, e)) return std::nullopt;
    how.values->push_back(e);
    reads = true;
  } else {
    std::string t = item_text(ctx, e);
    if (!t.empty()) {
      reads = true;
      return t;
    }
    if (contains_read(ctx, e)) return std::nullopt;
  }
  // Only values with tensor evidence make formatting later worthwhile
  // (`f"step {i}"` of a Python int stays as written).
  if (predication::tensor_evidence(ctx, e)) reads = true;
  switch (ctx.tree().kind(e)) {
    case NodeKind::NamedExpr:
    case NodeKind::Lambda:
    case NodeKind::Yield:
    case NodeKind::YieldFrom: return "(" + std::string(ctx.text_of(e)) + ")";
    default: return std::string(ctx.text_of(e));
  }
}

void append_literal(std::string& out, std::string_view s) {
  for (char c : s) {
    out += c;
    if (c == '{' || c == '}') out += c;
  }
}

// The literal text of a string Constant node, or nullopt.
std::optional<std::string_view> str_value(const ast::Tree& tree, NodeId n) {
  if (tree.kind(n) != NodeKind::Constant) return std::nullopt;
  const auto& v = tree.constant_at(tree.field(n, GM_F(Constant, value)));
  if (v.kind != ast::ConstantValue::Kind::Str) return std::nullopt;
  return tree.str(v.text);
}

std::optional<FormatCall> fstring_text(const lint::RuleContext& ctx, NodeId js,
                                       std::string* why_not, const Formatting& how) {
  const auto& tree = ctx.tree();
  std::string templ;
  std::vector<std::string> values;
  bool reads = false;
  for (NodeId part : tree.children(js, GM_F(JoinedStr, values))) {
    if (auto lit = str_value(tree, part)) {
      append_literal(templ, *lit);
      continue;
    }
    if (tree.kind(part) != NodeKind::FormattedValue) return std::nullopt;
    // A bare tuple field (`{a, b}`): its node does not span only its text.
    if (tree.kind(tree.child(part, GM_F(FormattedValue, value))) == NodeKind::Tuple)
      return std::nullopt;
    templ += '{';
    const auto conv =
        static_cast<std::int32_t>(tree.field(part, GM_F(FormattedValue, conversion)).a);
    if (conv == 's' || conv == 'r' || conv == 'a') {
      templ += '!';
      templ += static_cast<char>(conv);
    }
    if (NodeId spec = tree.child(part, GM_F(FormattedValue, format_spec))) {
      std::string spec_text;
      for (NodeId sp : tree.children(spec, GM_F(JoinedStr, values))) {
        auto lit = str_value(tree, sp);
        if (!lit || lit->find_first_of("{}") != std::string_view::npos) {
          if (why_not) *why_not = "an f-string field has a field in its format spec (`{x:{w}}`)";
          return std::nullopt;
        }
        spec_text += *lit;
      }
      if (!spec_text.empty()) templ += ':' + spec_text;
    }
    templ += '}';
    auto v = value_text(ctx, tree.child(part, GM_F(FormattedValue, value)), reads, how);
    if (!v) return std::nullopt;
    values.push_back(std::move(*v));
  }
  if (values.empty() || !reads) return std::nullopt;
  values.insert(values.begin(), ctx.quote(templ));
  return FormatCall{std::string(kRuntimeAlias) + "." + std::string(how.fn) + "(",
                    std::move(values)};
}

// `"...".format(a, b)`: positional arguments only.
std::optional<FormatCall> format_call_text(const lint::RuleContext& ctx, NodeId call,
                                           const Formatting& how) {
  const auto& tree = ctx.tree();
  const NodeId func = tree.child(call, GM_F(Call, func));
  if (tree.kind(func) != NodeKind::Attribute ||
      tree.text(tree.field(func, GM_F(Attribute, attr))) != "format")
    return std::nullopt;
  const NodeId recv = tree.child(func, GM_F(Attribute, value));
  if (!str_value(tree, recv) || !tree.children(call, GM_F(Call, keywords)).empty())
    return std::nullopt;
  bool reads = false;
  FormatCall out{std::string(kRuntimeAlias) + "." + std::string(how.fn) + "(",
                 {std::string(ctx.text_of(recv))}};
  const auto args = tree.children(call, GM_F(Call, args));
  if (args.empty()) return std::nullopt;
  for (NodeId a : args) {
    if (tree.kind(a) == NodeKind::Starred) return std::nullopt;
    auto v = value_text(ctx, a, reads, how);
    if (!v) return std::nullopt;
    out.args.push_back(std::move(*v));
  }
  if (!reads) return std::nullopt;
  return out;
}

// `"..." % v` / `"..." % (a, b)`: the values as `fmt_percent` receives them.
std::optional<FormatCall> percent_text(const lint::RuleContext& ctx, NodeId binop,
                                       const Formatting& how) {
  const auto& tree = ctx.tree();
  if (tree.kind(binop) != NodeKind::BinOp ||
      static_cast<NodeKind>(tree.field(binop, GM_F(BinOp, op)).a) != NodeKind::Mod)
    return std::nullopt;
  const NodeId left = tree.child(binop, GM_F(BinOp, left));
  const NodeId right = tree.child(binop, GM_F(BinOp, right));
  if (!str_value(tree, left)) return std::nullopt;
  bool reads = false;
  std::string values;
  if (tree.kind(right) == NodeKind::Tuple) {
    const auto elts = tree.children(right, GM_F(Tuple, elts));
    if (elts.empty()) return std::nullopt;
    values = "(";
    for (std::size_t i = 0; i < elts.size(); ++i) {
      if (tree.kind(elts[i]) == NodeKind::Starred) return std::nullopt;
      auto v = value_text(ctx, elts[i], reads, how);
      if (!v) return std::nullopt;
      values += (i ? ", " : "") + *v;
    }
    values += elts.size() == 1 ? ",)" : ")";
  } else if (tree.kind(right) == NodeKind::Dict) {
    return std::nullopt;  // `%(name)s`: left as written
  } else {
    auto v = value_text(ctx, right, reads, how);
    if (!v) return std::nullopt;
    values = std::move(*v);
  }
  if (!reads) return std::nullopt;
  return FormatCall{std::string(kRuntimeAlias) + "." + std::string(how.fn_percent) + "(",
                    {std::string(ctx.text_of(left)), std::move(values)}};
}

// `_graphmend_rt.fmt(template, *values)` / `fmt_percent(template, values)`
// (what defer_reads wrote) as `message(...)` / `message_percent(...)`: the
// same arguments, formatted only when needed.
std::optional<FormatCall> deferred_format_text(const lint::RuleContext& ctx, NodeId call,
                                               std::vector<NodeId>& values) {
  const auto& tree = ctx.tree();
  const auto q = ctx.model()->qualified_name(tree.child(call, GM_F(Call, func)));
  const bool percent = q == std::string(kRuntimeModule) + ".fmt_percent";
  if (!percent && q != std::string(kRuntimeModule) + ".fmt") return std::nullopt;
  const auto args = tree.children(call, GM_F(Call, args));
  if (!tree.children(call, GM_F(Call, keywords)).empty() || args.empty() ||
      !str_value(tree, args[0]) || (percent && args.size() != 2))
    return std::nullopt;
  FormatCall out{std::string(kRuntimeAlias) + (percent ? ".message_percent(" : ".message("), {}};
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (tree.kind(args[i]) == NodeKind::Starred) return std::nullopt;
    if (i > 0) values.push_back(args[i]);
    out.args.emplace_back(ctx.text_of(args[i]));
  }
  return out;
}

}  // namespace

std::string FormatCall::text() const {
  std::string out = head;
  for (std::size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
  return out + ")";
}

std::optional<predication::Doc> deferred_doc(const lint::RuleContext& ctx, NodeId arg) {
  const auto& tree = ctx.tree();
  const Formatting how;
  std::optional<FormatCall> call;
  if (tree.kind(arg) == NodeKind::JoinedStr) {
    call = fstring_text(ctx, arg, nullptr, how);
  } else if (tree.kind(arg) == NodeKind::BinOp) {
    call = percent_text(ctx, arg, how);
  } else if (tree.kind(arg) == NodeKind::Call) {
    if (auto t = item_text(ctx, arg); !t.empty()) return predication::Doc::atom(std::move(t));
    call = format_call_text(ctx, arg, how);
  }
  if (!call) return std::nullopt;
  std::vector<predication::Doc> args;
  for (auto& a : call->args) args.push_back(predication::Doc::atom(std::move(a)));
  return predication::Doc::call_of(std::move(call->head), std::move(args));
}

std::optional<edits::Edit> defer_reads(const lint::RuleContext& ctx, NodeId arg,
                                       std::string* why_not) {
  const auto& tree = ctx.tree();
  const Formatting how;
  std::optional<std::string> text;
  std::optional<FormatCall> call;
  if (tree.kind(arg) == NodeKind::JoinedStr) {
    call = fstring_text(ctx, arg, why_not, how);
  } else if (tree.kind(arg) == NodeKind::BinOp) {
    call = percent_text(ctx, arg, how);
  } else if (tree.kind(arg) == NodeKind::Call) {
    if (auto t = item_text(ctx, arg); !t.empty())
      text = std::move(t);
    else
      call = format_call_text(ctx, arg, how);
  }
  if (call) text = call->text();
  if (!text) return std::nullopt;
  return edits::Edit::replace(tree.at(arg).begin, tree.at(arg).end, std::move(*text));
}

namespace {

// `d` on one line (its atoms are one-line: fit_call only takes one-line calls).
std::string one_line(const predication::Doc& d) {
  if (!d.call) return d.text;
  std::string out = d.text;
  for (std::size_t i = 0; i < d.args.size(); ++i) out += (i ? ", " : "") + one_line(d.args[i]);
  return out + ")";
}

}  // namespace

std::vector<edits::Edit> fit_call(const lint::RuleContext& ctx, NodeId call, std::string callee,
                                  std::vector<predication::Doc> leading,
                                  const std::vector<std::pair<NodeId, predication::Doc>>& rewritten,
                                  std::vector<edits::Edit> edits) {
  const auto& tree = ctx.tree();
  const std::string_view text = ctx.text();
  const auto& node = tree.at(call);
  const NodeId stmt = ctx.model() ? ctx.model()->parent(call) : NodeId{};
  if (!stmt || tree.kind(stmt) != NodeKind::Expr || tree.at(stmt).begin != node.begin ||
      text.substr(node.begin, node.end - node.begin).find('\n') != std::string_view::npos ||
      !edits::statement_indentation(text, node.begin) || !edits::only_trivia_after(text, node.end))
    return edits;
  // The arguments in source order (positional and keyword may interleave).
  std::vector<NodeId> args;
  for (NodeId a : tree.children(call, GM_F(Call, args))) args.push_back(a);
  for (NodeId k : tree.children(call, GM_F(Call, keywords))) args.push_back(k);
  std::sort(args.begin(), args.end(),
            [&](NodeId a, NodeId b) { return tree.at(a).begin < tree.at(b).begin; });
  std::vector<predication::Doc> docs = std::move(leading);
  for (NodeId a : args) {
    const predication::Doc* doc = nullptr;
    NodeId value = a;
    std::string prefix;
    if (tree.kind(a) == NodeKind::keyword) {
      value = tree.child(a, GM_F(keyword, value));
      prefix = std::string(text.substr(tree.at(a).begin, tree.at(value).begin - tree.at(a).begin));
    }
    for (const auto& [n, d] : rewritten)
      if (n == value) doc = &d;
    if (!doc) {
      docs.push_back(predication::source_doc(ctx, a));
      continue;
    }
    predication::Doc d = *doc;
    d.text = prefix + d.text;
    docs.push_back(std::move(d));
  }
  const predication::Doc whole =
      predication::Doc::call_of(std::move(callee) + "(", std::move(docs));
  const predication::Wrap w = predication::wrap_of(ctx, stmt);
  if (w.base + one_line(whole).size() <= w.limit) return edits;
  const auto lines = predication::layout(w, "", "", whole);
  if (lines.size() < 2) return edits;
  if (auto e = ctx.replace_statement(stmt, lines)) return {std::move(*e)};
  return edits;
}

std::optional<FormatCall> lazy_message(const lint::RuleContext& ctx, NodeId arg,
                                       std::vector<NodeId>& values) {
  const auto& tree = ctx.tree();
  const Formatting how{"message", "message_percent", true, &values};
  std::string why_not;
  switch (tree.kind(arg)) {
    case NodeKind::JoinedStr: return fstring_text(ctx, arg, &why_not, how);
    case NodeKind::BinOp: return percent_text(ctx, arg, how);
    case NodeKind::Call:
      if (auto deferred = deferred_format_text(ctx, arg, values)) return deferred;
      return format_call_text(ctx, arg, how);
    default: return std::nullopt;
  }
}

namespace {

// The same for every fix of a file: computed once per file (a scan of every
// binding, and of the imports), not once per fix.
struct RuntimeImportMemo {
  bool done = false;
  std::string clash;
  std::optional<edits::Edit> import;
};
const RuntimeImportMemo& runtime_import_memo(const lint::RuleContext& ctx) {
  auto& m = ctx.scratch<RuntimeImportMemo>();
  if (!m.done) {
    m.clash = runtime_alias_clash(*ctx.model());
    if (m.clash.empty()) m.import = runtime_import(ctx);
    m.done = true;
  }
  return m;
}
}  // namespace

void attach_fix(const lint::RuleContext& ctx, lint::Diagnostic& d, std::string description,
                std::vector<edits::Edit> edits, bool unsafe) {
  const RuntimeImportMemo& memo = runtime_import_memo(ctx);
  if (!memo.clash.empty()) {
    d.declined_reason = memo.clash;
    return;
  }
  if (memo.import) edits.push_back(*memo.import);
  d.fix = unsafe ? edits::Fix::unsafe(std::move(description), std::move(edits))
                 : edits::Fix::safe(std::move(description), std::move(edits));
}

}  // namespace gm::rules::runtime_rewrite
