// libFuzzer target: bytes -> Source::decode -> parse_module -> dump, for
// every CPython minor 3.8..3.13. Crashes, sanitizer reports, and broken
// invariants (a node's byte range outside the source, a dump that is not a
// Module) are findings; syntax errors are ordinary results.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "ast/dump.h"
#include "parser/parse.h"
#include "syntax/source.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto decoded = gm::Source::decode(std::string(reinterpret_cast<const char*>(data), size));
  const auto* source = std::get_if<gm::Source>(&decoded);
  if (source == nullptr) return 0;
  const std::size_t text_size = source->text().size();
  for (int minor = 8; minor <= 13; ++minor) {
    gm::ParseOptions options;
    options.version = {3, minor};
    const auto result = gm::parse_module(*source, options);
    if (result.error) continue;
    const auto& tree = result.tree;
    for (std::uint32_t i = 1; i <= tree.node_count(); ++i) {
      const auto& node = tree.at(gm::ast::NodeId{i});
      if (node.begin > node.end || node.end > text_size) __builtin_trap();
    }
    gm::ast::DumpOptions dump_options;
    dump_options.minor = minor;
    const std::string text = gm::ast::dump(tree, tree.root(), dump_options);
    if (text.rfind("Module(", 0) != 0) __builtin_trap();
  }
  return 0;
}
