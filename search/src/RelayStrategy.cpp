// RelayStrategy.cpp — `bayes-local`: `bayes`, and `local` (iterated local search) relayed in
// when the model stalls.
//
// Why: on some spaces the model misleads. On convolution_W7800 about one run in ten of `bayes`
// climbs to a local optimum 9% above the best (block 16 x 4 where the best is 32 x 2: four
// parameters differ) and stays there for the rest of 200 evaluations, because every
// perturbation and far candidate it scores is scored by the same model that led it there
// (`bayes-escape` and `bayes-climb` choose their jumps by expected improvement and keep the
// tail). A search that does not use the model at all leaves such a trap: `local`'s hill
// climbs, from perturbations of the best and from random restarts, are what let `bandit`
// reach the optimum in every run there. `bandit` shares evaluations from the first one, which
// costs it the early budget on spaces where the model is right (pnpoly_RTX3090 at 50).
//
// So: `bayes` proposes alone until it has stalled (kStall x parameters, at least kStallMin,
// evaluations in a row without improving the best, as bayes-escape and bayes-climb); while
// stalled, every other proposal is `local`'s; a gain from either ends the stall. Both are told
// every outcome, whoever proposed it (each keeps learning from the whole history), and a
// configuration one of them hands out is reserved in the other, so neither proposes it again.
// Before the first stall its proposals are exactly `bayes`' (same seed: a unit test checks).
// The constants are bayes-escape's and bayes-climb's, set before measuring; docs/search.md has
// the variants tried (a stall twice as long, one proposal in three, `genetic` as the helper, a
// share that shrinks while the helper finds nothing).
#include <algorithm>

#include "Rng.h"
#include "Strategies.h"

namespace flotilla::search {
namespace {

constexpr std::size_t kStall = 2, kStallMin = 10;
constexpr std::size_t kShare = 2;  // while stalled, one proposal in kShare is the helper's

class RelayStrategy final : public Strategy {
 public:
  RelayStrategy(const StrategyOptions& options, const Space& space) : Strategy(space, options) {
    auto model = options;
    model.name = "bayes";
    m_model = make_strategy(model, space);
    auto helper = options;
    helper.name = "local";
    helper.seed = mix_seed(options.seed, 200);
    helper.warm_start.clear();  // `local` ignores it; bayes uses it for its first proposals
    m_helper = make_strategy(helper, space);
    m_stall = std::max(kStallMin, kStall * space.parameters().size());
  }
  std::string_view name() const override { return "bayes-local"; }

 protected:
  std::optional<Configuration> propose() override {
    Strategy* first = m_model.get();
    Strategy* second = m_helper.get();
    if (history().size() >= m_last_gain + m_stall && m_turn++ % kShare == 0) std::swap(first, second);
    for (Strategy* s : {first, second}) {  // the other one when the first has nothing left
      auto batch = s->ask(1);
      if (batch.empty()) continue;
      (s == m_model.get() ? m_helper : m_model)->reserve(batch.front());
      return batch.front();
    }
    return std::nullopt;
  }

  void observe(std::size_t index) override {
    const auto& o = history()[index];
    for (Strategy* s : {m_model.get(), m_helper.get()}) {
      if (o.failed()) s->tell(o.config, o.failure);
      else s->tell(o.config, options().maximize ? -o.loss.front() : o.loss.front());
    }
    const bool retold = history().size() == m_told;  // told again (a rollback): the best may have gone
    m_told = history().size();
    if (retold) {
      m_best.reset();
      for (const auto& h : history())
        if (!h.failed() && (!m_best || h.loss.front() < *m_best)) m_best = h.loss.front();
      return;
    }
    if (!o.failed() && (!m_best || o.loss.front() < *m_best)) m_best = o.loss.front(), m_last_gain = history().size();
  }

 private:
  std::unique_ptr<Strategy> m_model, m_helper;
  std::size_t m_stall = kStallMin;
  std::size_t m_last_gain = 0;  // history size when the best last improved
  std::size_t m_told = 0;       // history size at the last outcome (unchanged: one told again)
  std::size_t m_turn = 0;       // takes turns between the helper and the model while stalled
  std::optional<double> m_best;
};

}  // namespace

std::unique_ptr<Strategy> make_bayes_local_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<RelayStrategy>(options, space);
}

}  // namespace flotilla::search
