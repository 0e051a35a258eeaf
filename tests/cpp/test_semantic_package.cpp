// Package-wide regions (semantic/package.h): small packages of modules, the
// roots each module gets, and the region records they make.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "analyzed_snippet.h"
#include "parser/parse.h"
#include "semantic/model.h"
#include "semantic/package.h"

namespace {

struct Module {
  std::string name;
  bool is_package = false;
  std::string text;
};

std::vector<std::vector<std::string>> roots(const std::vector<Module>& modules,
                                            bool include_own = false) {
  std::vector<gm::sema::ModuleSummary> summaries;
  gm::sema::AnalyzeOptions options;
  options.facts = false;
  for (const auto& m : modules)
    summaries.push_back(gm::sema::summarize(gm::testing::analyze_snippet(m.text, options)->model,
                                            m.name, m.is_package));
  return gm::sema::package_roots(summaries, include_own);
}

using Names = std::vector<std::string>;

const std::vector<Module> kPackage = {
    {"pkg", true, "from .model import Net\n"},
    {"pkg.model", false,
     "import torch\n"
     "from torch import nn\n"
     "from .utils.helpers import scale, Mixin\n"
     "from .utils import registry\n"
     "from .rope import rope_update\n"
     "\n"
     "class Net(Mixin, nn.Module):\n"
     "    def __init__(self):\n"
     "        super().__init__()\n"
     "        self.setup()\n"
     "    @rope_update\n"
     "    def forward(self, x):\n"
     "        fn = registry.FUNCTIONS['double']\n"
     "        out = scale(x) + self.shift(x) + fn(x)\n"
     "        return Output(out) if self.is_ready else out\n"
     "\n"
     "from .outputs import Output\n"},
    {"pkg.utils", true, ""},
    {"pkg.utils.helpers", false,
     "def scale(x):\n"
     "    return _twice(x)\n"
     "def _twice(x):\n"
     "    return x * 2\n"
     "def unused(x):\n"
     "    return x\n"
     "class Mixin:\n"
     "    def setup(self):\n"
     "        pass\n"
     "    def shift(self, x):\n"
     "        return x + 1\n"
     "    @property\n"
     "    def is_ready(self):\n"
     "        return True\n"},
    {"pkg.utils.registry", false,
     "def double(x):\n"
     "    return x + x\n"
     "def validate(cfg):\n"
     "    return cfg\n"
     "FUNCTIONS = {'double': double}\n"
     "VALIDATORS = {'default': validate}\n"},
    {"pkg.rope", false,
     "def rope_update(fn):\n"
     "    def wrapper(self, x):\n"
     "        return fn(self, x)\n"
     "    return wrapper\n"
     "def validate_rope(cfg):\n"
     "    return cfg\n"},
    {"pkg.outputs", false,
     "class Base:\n"
     "    def __post_init__(self):\n"
     "        pass\n"
     "    def __getitem__(self, k):\n"
     "        return k\n"
     "    def to_tuple(self):\n"
     "        return ()\n"
     "class Output(Base):\n"
     "    def __init__(self, v):\n"
     "        self.v = v\n"},
};

TEST(PackageRegions, ReachesAcrossImportsBasesDecoratorsRegistriesAndOutputs) {
  const auto r = roots(kPackage);
  ASSERT_EQ(r.size(), kPackage.size());
  EXPECT_EQ(r[1], Names{});  // pkg.model: its forward is already a region
  // scale and what it calls; the mixin's shift (a self call through a base in
  // another file) and its property; not setup (only __init__ calls it),
  // not unused.
  EXPECT_EQ(r[3], (Names{"Mixin.is_ready", "Mixin.shift", "_twice", "scale"}));
  // The registry dict compiled code reads: double, not the validator.
  EXPECT_EQ(r[4], Names{"double"});
  // The decorator and its wrapper; not the config validator.
  EXPECT_EQ(r[5], (Names{"rope_update", "rope_update.wrapper"}));
  // Constructing Output: its __init__, the inherited __post_init__; special
  // methods (an output is indexed) too; not to_tuple, which nothing calls.
  EXPECT_EQ(r[6], (Names{"Base.__getitem__", "Base.__post_init__", "Output.__init__"}));
}

TEST(PackageRegions, OneFileAloneGetsNothingExtra) {
  const auto r = roots({kPackage[3]});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].empty());
}

TEST(PackageRegions, NothingCompiledReachesNoSpecialMethod) {
  // Special methods run on operators over the objects compiled code
  // handles. A package without torch (the standard library's shape): no
  // compiled code runs them.
  const std::vector<Module> plain = {
      {"lib", true, "from .box import Box\n"},
      {"lib.box", false,
       "class Box:\n"
       "    def __getitem__(self, i):\n"
       "        print(i)\n"
       "        return helper(i)\n"
       "def helper(i):\n"
       "    return i\n"},
  };
  for (const auto& r : roots(plain, /*include_own=*/true)) EXPECT_TRUE(r.empty());
  // Beside a compiled forward that never sees a Box (a dataset's
  // __getitem__ beside a model): still not reached.
  std::vector<Module> with_model = plain;
  with_model.push_back({"lib.net", false,
                        "from torch import nn\n"
                        "class Net(nn.Module):\n"
                        "    def forward(self, x):\n"
                        "        return x\n"});
  EXPECT_EQ(roots(with_model)[1], Names{});
  // A module given a Box (its signature names the class), one that makes
  // one in __init__, and a forward that builds one: reached each time, and
  // a base's special methods with the class's.
  for (const char* net : {"    def forward(self, x: Box):\n        return x[0]\n",
                          "    def __init__(self):\n        super().__init__()\n"
                          "        self.box = Box()\n"
                          "    def forward(self, x):\n        return self.box[x]\n",
                          "    def forward(self, x):\n        return Box()[x]\n"}) {
    std::vector<Module> sees = plain;
    sees[1].text += "class Tagged(Box):\n    def __len__(self):\n        return 1\n";
    sees.push_back({"lib.net", false,
                    std::string("from torch import nn\nfrom .box import Tagged as Box\n"
                                "class Net(nn.Module):\n") +
                        net});
    EXPECT_EQ(roots(sees)[1], (Names{"Box.__getitem__", "Tagged.__len__", "helper"})) << net;
  }
}

// Calling an object runs its class's __call__; compiled code calls the
// objects its module made (an attention processor built in __init__), not
// every class that has one (a pipeline's or a tokenizer's __call__, whose
// callees would all become regions).
TEST(PackageRegions, CallReachesTheCallablesAModuleMakesNotEveryClass) {
  const std::vector<Module> pkg = {
      {"d", true, ""},
      {"d.processors", false,
       "class AttnProcessor:\n"
       "    def __call__(self, attn, x):\n"
       "        return attn.scale(x)\n"
       "class Unused:\n"
       "    def __call__(self, x):\n"
       "        return x\n"},
      {"d.attention", false,
       "from torch import nn\n"
       "from .processors import AttnProcessor\n"
       "class Attention(nn.Module):\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.processor = AttnProcessor()\n"
       "    def forward(self, x):\n"
       "        return self.processor(self, x)\n"
       "    def scale(self, x):\n"
       "        return x * 2\n"},
      {"d.pipeline", false,
       "from .attention import Attention\n"
       "class Pipeline:\n"
       "    def __call__(self, prompt):\n"
       "        log_progress(prompt)\n"
       "        return Attention()(prompt)\n"
       "def log_progress(p):\n"
       "    print(p)\n"},
  };
  const auto r = roots(pkg);
  EXPECT_EQ(r[1], Names{"AttnProcessor.__call__"});
  EXPECT_EQ(r[3], Names{});
}

TEST(PackageRegions, CallReachesTheProcessorClassAModuleBodyNames) {
  // diffusers' attention classes: `_default_processor_cls = LTXProcessor` in
  // the class body, `self._default_processor_cls()` in __init__, the
  // instance called in forward.
  const std::vector<Module> pkg = {
      {"d", true, ""},
      {"d.processors", false,
       "class ExternalProcessor:\n"
       "    def __call__(self, attn, x):\n"
       "        return x\n"},
      {"d.attention", false,
       "from torch import nn\n"
       "from .processors import ExternalProcessor\n"
       "def rotate(x):\n"
       "    return x\n"
       "class LocalProcessor:\n"
       "    def __call__(self, attn, x):\n"
       "        return rotate(x)\n"
       "class Attention(nn.Module):\n"
       "    _default_processor_cls = LocalProcessor\n"
       "    _available = [ExternalProcessor]\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.processor = self._default_processor_cls()\n"
       "    def forward(self, x):\n"
       "        return self.processor(self, x)\n"},
  };
  const auto r = roots(pkg);
  EXPECT_EQ(r[1], Names{"ExternalProcessor.__call__"});
  EXPECT_EQ(r[2], (Names{"LocalProcessor.__call__", "rotate"}));
}

TEST(PackageRegions, AnIsinstanceOperandIsNotConstructed) {
  // vector_quantize_pytorch's Sequential: `isinstance(fn, QUANTIZE_KLASSES)`
  // in forward compares against every quantizer class and runs none of
  // their __init__s; a class the forward does construct still reaches its.
  const std::vector<Module> pkg = {
      {"q", true, ""},
      {"q.fsq", false,
       "class FSQ:\n"
       "    def __init__(self):\n"
       "        print('init')\n"
       "    def __getitem__(self, i):\n"
       "        return i\n"
       "class Made:\n"
       "    def __init__(self):\n"
       "        pass\n"},
      {"q.utils", false,
       "from torch.nn import Module\n"
       "from .fsq import FSQ, Made\n"
       "KLASSES = (FSQ,)\n"
       "class Sequential(Module):\n"
       "    def forward(self, fn, x):\n"
       "        if isinstance(fn, KLASSES) or issubclass(type(fn), (FSQ, int)):\n"
       "            return Made()\n"
       "        return x\n"},
  };
  const auto r = roots(pkg);
  EXPECT_EQ(r[1], Names{"Made.__init__"});
}

TEST(PackageRegions, ACallableStoredInSelfFromAnotherFileIsReached) {
  const std::vector<Module> pkg = {
      {"v", true, ""},
      {"v.dist", false,
       "def sample_ddp(x):\n"
       "    return x\n"
       "def sample_local(x):\n"
       "    return x\n"
       "def unused(x):\n"
       "    return x\n"},
      {"v.codebook", false,
       "from torch import nn\n"
       "from .dist import sample_ddp, sample_local, unused\n"
       "class Codebook(nn.Module):\n"
       "    def __init__(self, ddp):\n"
       "        super().__init__()\n"
       "        self.sample_fn = sample_ddp if ddp else sample_local\n"
       "        self.other = unused\n"
       "    def forward(self, x):\n"
       "        return self.sample_fn(x)\n"},
  };
  const auto r = roots(pkg);
  EXPECT_EQ(r[1], (Names{"sample_ddp", "sample_local"}));
}

TEST(PackageRegions, ARegistryClassReachesTheFunctionsItsMethodDecorates) {
  // diffusers' attention backends: `@Registry.register(name)` files each
  // backend in a class-level dict; the forward picks one out of
  // `Registry._backends`. Not reached: what a class no compiled code loads
  // decorates, and a decorator that is no method of its class.
  const std::vector<Module> pkg = {
      {"d", true, ""},
      {"d.registry", false,
       "class Base:\n"
       "    _backends = {}\n"
       "    @classmethod\n"
       "    def register(cls, name):\n"
       "        def decorator(func):\n"
       "            cls._backends[name] = func\n"
       "            return func\n"
       "        return decorator\n"
       "class Registry(Base):\n"
       "    pass\n"
       "class Other:\n"
       "    pass\n"},
      {"d.backends", false,
       "from torch import nn\n"
       "from .registry import Registry, Other\n"
       "def helper(q):\n"
       "    return q\n"
       "@Registry.register('native')\n"
       "def native(q):\n"
       "    return helper(q)\n"
       "@Other.wrap('x')\n"
       "def not_filed(q):\n"
       "    return q\n"
       "class Local:\n"
       "    @staticmethod\n"
       "    def add(f):\n"
       "        return f\n"
       "@Local.add\n"
       "def local_backend(q):\n"
       "    return q\n"
       "class Unloaded:\n"
       "    @staticmethod\n"
       "    def add(f):\n"
       "        return f\n"
       "@Unloaded.add\n"
       "def unused_backend(q):\n"
       "    return q\n"
       "class Block(nn.Module):\n"
       "    def forward(self, q):\n"
       "        return Local\n"},
      {"d.model", false,
       "from torch import nn\n"
       "from .registry import Registry\n"
       "from .backends import Local\n"
       "class Attention(nn.Module):\n"
       "    def forward(self, q):\n"
       "        return Registry._backends.get('native')(q)\n"},
  };
  const auto r = roots(pkg);
  EXPECT_EQ(r[1], (Names{"Base.register", "Base.register.decorator"}));
  EXPECT_EQ(r[2], (Names{"Local.add", "helper", "local_backend", "native"}));
}

TEST(PackageRegions, MethodOfAnAttributeTheClassConstructsReachesThatClassOnly) {
  // ConsistencyDecoderVAE.decode in diffusers: `self.scheduler.set_timesteps()`
  // on the scheduler its __init__ makes runs that scheduler's method, not the
  // set_timesteps of every scheduler in the package.
  const std::vector<Module> pkg = {
      {"d", true, ""},
      {"d.schedulers", false,
       "class SchedulerMixin:\n"
       "    def step(self, x):\n"
       "        return x\n"
       "class ConsistencyScheduler(SchedulerMixin):\n"
       "    def set_timesteps(self, n):\n"
       "        self.n = n\n"
       "class EulerScheduler(SchedulerMixin):\n"
       "    def set_timesteps(self, n):\n"
       "        self.n = n\n"
       "    def step(self, x):\n"
       "        return x\n"},
      {"d.vae", false,
       "from torch import nn\n"
       "from .schedulers import ConsistencyScheduler\n"
       "class VAE(nn.Module):\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.scheduler = ConsistencyScheduler()\n"
       "    def forward(self, x):\n"
       "        self.scheduler.set_timesteps(4)\n"
       "        return self.scheduler.step(x)\n"},
  };
  const auto r = roots(pkg);
  // step: found in the constructed class's base; EulerScheduler's own step
  // and set_timesteps are not reached.
  EXPECT_EQ(r[1], (Names{"ConsistencyScheduler.set_timesteps", "SchedulerMixin.step"}));

  // A second store that is not a construction (reset) keeps the call on
  // any method of that name.
  const std::vector<Module> calls_other = {pkg[0],
                                           pkg[1],
                                           {"d.vae", false,
                                            "from torch import nn\n"
                                            "from .schedulers import ConsistencyScheduler\n"
                                            "class VAE(nn.Module):\n"
                                            "    def __init__(self):\n"
                                            "        super().__init__()\n"
                                            "        self.other = ConsistencyScheduler()\n"
                                            "    def reset(self, s):\n"
                                            "        self.other = s\n"
                                            "    def forward(self, x):\n"
                                            "        return self.other.set_timesteps(x)\n"}};
  EXPECT_EQ(roots(calls_other)[1],
            (Names{"ConsistencyScheduler.set_timesteps", "EulerScheduler.set_timesteps"}));
}

TEST(PackageRegions, IncludeOwnListsTheModulesOwnRegions) {
  const auto r = roots(kPackage, /*include_own=*/true);
  EXPECT_EQ(r[1], (Names{"Net.forward"}));
}

TEST(PackageRegions, CrossFileModuleBaseMakesForwardARegion) {
  // Block derives from an nn.Module defined in another file under a name the
  // one-file analysis does not recognise.
  const auto r =
      roots({{"p", true, ""},
             {"p.base", false, "from torch import nn\nclass Thing(nn.Module):\n    pass\n"},
             {"p.block", false,
              "from .base import Thing\n"
              "class Block(Thing):\n"
              "    def forward(self, x):\n"
              "        return helper(x)\n"
              "    def configure(self):\n"
              "        pass\n"
              "def helper(x):\n"
              "    return x\n"}});
  EXPECT_EQ(r[2], (Names{"Block.forward", "helper"}));
}

TEST(PackageRegions, MethodOnUnknownReceiverAndInstalledMethods) {
  // `logger.warning_once(...)`: a module-level function installed on a class
  // elsewhere; `obj.render()` on a receiver nothing resolves reaches every
  // package method of that name.
  const auto r = roots({{"q", true, ""},
                        {"q.logs", false,
                         "import logging\n"
                         "def warning_once(self, msg):\n"
                         "    pass\n"
                         "logging.Logger.warning_once = warning_once\n"
                         "class View:\n"
                         "    def render(self):\n"
                         "        pass\n"
                         "    def other(self):\n"
                         "        pass\n"},
                        {"q.net", false,
                         "from torch import nn\n"
                         "class Net(nn.Module):\n"
                         "    def forward(self, x, logger, obj):\n"
                         "        logger.warning_once('x')\n"
                         "        obj.render()\n"
                         "        return x\n"}});
  EXPECT_EQ(r[1], (Names{"View.render", "warning_once"}));
}

TEST(PackageRegions, ExtraRootsBecomeRegionsWithTheirInFileCallees) {
  gm::sema::AnalyzeOptions options;
  options.extra_roots = {"scale"};
  const auto snippet = gm::testing::analyze_snippet(kPackage[3].text, options);
  const auto& m = snippet->model;
  std::vector<std::string> names;
  for (const auto& r : m.region_functions()) {
    names.push_back(gm::sema::definition_path(m, r.function.index));
    if (names.back() == "scale") {
      EXPECT_EQ(r.reason, gm::sema::RegionReason::Package);
    }
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (Names{"_twice", "scale"}));
}

}  // namespace
