// The consumer's own core/ir/view.h, first on its include path: sluice's installed headers must include their
// own view.h as <sluice/core/ir/view.h> and never reach this one.
#error "a consumer's core/ir/view.h replaced sluice's: installed headers must include <sluice/...>"
