// FamilyTest.cpp — the registry and the generic parameter checks (messages are API).
#include <gtest/gtest.h>

#include <set>

#include "flotilla/kernels/Family.h"

namespace fk = flotilla::kernels;

namespace {

const fk::KernelFamily& stencil() {
  const fk::KernelFamily* family = fk::find_family("stencil");
  if (!family) throw std::runtime_error("stencil family missing");
  return *family;
}

// The message of the InvalidParameter that resolve_params throws, and the parameter it names.
std::pair<std::string, std::string> rejection(const fk::Params& given) {
  try {
    (void)fk::resolve_params(stencil(), given);
  } catch (const fk::InvalidParameter& e) {
    return {e.parameter(), e.what()};
  }
  return {"", "accepted"};
}

TEST(Registry, ListsStencilAndFindsItByName) {
  ASSERT_FALSE(fk::families().empty());
  const fk::KernelFamily* family = fk::find_family("stencil");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->name(), "stencil");
  EXPECT_EQ(fk::families().front(), family);
  EXPECT_FALSE(family->description().empty());
  EXPECT_EQ(family->description().find('\n'), std::string_view::npos);  // one line
}

TEST(Registry, UnknownNameIsNull) {
  EXPECT_EQ(fk::find_family("stencils"), nullptr);
  EXPECT_EQ(fk::find_family(""), nullptr);
}

TEST(Registry, FamilyNamesAreUnique) {
  std::set<std::string> names;
  for (const fk::KernelFamily* family : fk::families()) {
    EXPECT_TRUE(names.insert(std::string(family->name())).second) << family->name();
  }
}

TEST(Params, StencilDeclaresTheTuningSpaceWithValidDefaults) {
  std::vector<std::string> names;
  for (const fk::ParamDecl& decl : stencil().params()) names.push_back(decl.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_x", "tile_y", "unroll", "precision", "n", "iters",
                                             "n_verify", "seed", "device"}));
  const fk::Params resolved = fk::resolve_params(stencil(), {});
  EXPECT_EQ(resolved.at("tile_x"), "32");
  EXPECT_EQ(resolved.at("precision"), "double");
  EXPECT_EQ(resolved.at("device"), "kokkos");
  EXPECT_EQ(resolved.size(), names.size());
}

TEST(Params, GivenValuesOverrideDefaults) {
  const fk::Params resolved = fk::resolve_params(stencil(), {{"tile_x", "128"}, {"unroll", "4"}});
  EXPECT_EQ(fk::int_param(resolved, "tile_x"), 128);
  EXPECT_EQ(fk::int_param(resolved, "unroll"), 4);
}

TEST(Params, AllowedTextDescribesChoicesAndRanges) {
  const auto& decls = stencil().params();
  EXPECT_EQ(decls[0].allowed_text(), "integer in [1, 1024]");
  EXPECT_EQ(decls[2].allowed_text(), "one of 1, 2, 4");
}

TEST(Params, UnknownParameterIsRejected) {
  EXPECT_EQ(rejection({{"tilex", "8"}}),
            std::make_pair(std::string("tilex"),
                           std::string("unknown parameter 'tilex' for kernel family 'stencil'")));
}

TEST(Params, OutOfRangeAndMalformedIntegersAreRejected) {
  EXPECT_EQ(rejection({{"tile_x", "0"}}).second,
            "parameter 'tile_x' must be an integer in [1, 1024], got '0'");
  EXPECT_EQ(rejection({{"tile_y", "8x"}}).second,
            "parameter 'tile_y' must be an integer in [1, 1024], got '8x'");
  EXPECT_EQ(rejection({{"tile_y", ""}}).second, "parameter 'tile_y' must be an integer in [1, 1024], got ''");
  EXPECT_EQ(rejection({{"n", "-4"}}).second, "parameter 'n' must be an integer in [1, 16384], got '-4'");
  EXPECT_EQ(rejection({{"iters", "1e3"}}).first, "iters");
}

TEST(Params, ChoicesAreRejectedByName) {
  EXPECT_EQ(rejection({{"unroll", "3"}}).second, "parameter 'unroll' must be one of 1, 2, 4, got '3'");
  EXPECT_EQ(rejection({{"precision", "half"}}).second,
            "parameter 'precision' must be one of double, float, got 'half'");
  EXPECT_EQ(rejection({{"device", "hip"}}).second,
            "parameter 'device' must be one of kokkos, cuda, got 'hip'");
}

}  // namespace
