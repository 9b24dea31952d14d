// The in-process clang (backends/cpu/clang_library.h): a module of its own, with Debian's clang and LLVM
// static archives linked in, which libsluice dlopens on its first compile. Only this file sees clang's C++
// API; libsluice talks to it through the two C functions below, so a process that finds every kernel in
// its cache never loads LLVM (~30 ms of relocations and page faults on a small machine).
//
// Each call compiles in a CompilerInstance of its own (own LLVMContext, own diagnostics), so calls run on
// several threads at once. The source and the object stay in memory: the driver sees the source through
// an in-memory file system laid over the real one (system headers still resolve), and the object is
// written into a buffer.
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/Version.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Driver/Compilation.h>
#include <clang/Driver/Driver.h>
#include <clang/Driver/Job.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cpu/clang_library.h"

namespace {

// The clang executable of the installation the module's archives come from (llvm-config's bindir, set by
// the build): the driver finds its resource directory (clang's own headers) from it, as a clang process
// does from its own path. The executable itself need not exist.
const std::string& clang_path() {
  static const std::string path = SLUICE_CLANG_EXECUTABLE;
  return path;
}

void init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

int compile(const char* const* flags, int n_flags, std::string_view source, void* ctx,
            sluice_clang_sink object, sluice_clang_sink diagnostics) {
  init_once();
  std::string log;
  llvm::raw_string_ostream log_stream(log);
  auto report = [&](int status) {
    log_stream.flush();
    diagnostics(ctx, log.data(), log.size());
    return status;
  };
  constexpr const char* kInput = "/sluice-in-memory/unit.c";
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  memory->addFile(kInput, 0,
                  llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(source.data(), source.size()), kInput,
                                                   /*RequiresNullTerminator=*/false));
  auto files = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  files->pushOverlay(memory);
  auto options = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  clang::DiagnosticsEngine diags(llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), options.get(),
                                 new clang::TextDiagnosticPrinter(log_stream, options.get()));

  // The driver turns the command line into the one compile job a clang process would run for it (the
  // same -cc1 arguments: target CPU and features, optimization and vectorization flags, PIC).
  std::vector<const char*> args = {clang_path().c_str()};
  args.insert(args.end(), flags, flags + n_flags);
  args.insert(args.end(), {kInput, "-o", "/sluice-in-memory/unit.o"});
  clang::driver::Driver driver(args[0], llvm::sys::getDefaultTargetTriple(), diags, "clang", files);
  std::unique_ptr<clang::driver::Compilation> compilation(driver.BuildCompilation(args));
  if (!compilation || diags.hasErrorOccurred()) return report(1);
  const clang::driver::JobList& jobs = compilation->getJobs();
  if (jobs.size() != 1 || !llvm::isa<clang::driver::Command>(*jobs.begin())) {
    log_stream << "in-process clang: the command line makes " << jobs.size() << " jobs, not one compile\n";
    return report(1);
  }
  const llvm::opt::ArgStringList& cc1 = llvm::cast<clang::driver::Command>(*jobs.begin()).getArguments();
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, cc1, diags, args[0])) return report(1);
  // -cc1 frees nothing at exit (the process ends anyway); here each compile must give its memory back.
  invocation->getFrontendOpts().DisableFree = false;
  invocation->getCodeGenOpts().DisableFree = false;

  clang::CompilerInstance ci;
  ci.setInvocation(std::move(invocation));
  ci.createDiagnostics(new clang::TextDiagnosticPrinter(log_stream, &ci.getDiagnosticOpts()));
  ci.createFileManager(files);
  llvm::SmallVector<char, 0> bytes;
  ci.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(bytes));
  clang::EmitObjAction action;
  if (!ci.ExecuteAction(action) || bytes.empty()) return report(1);
  object(ctx, bytes.data(), bytes.size());
  return report(0);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int sluice_clang_compile(const char* const* flags,
                                                                           int n_flags, const char* source,
                                                                           size_t size, void* ctx,
                                                                           sluice_clang_sink object,
                                                                           sluice_clang_sink diagnostics) {
  try {
    return compile(flags, n_flags, std::string_view(source, size), ctx, object, diagnostics);
  } catch (const std::exception& e) {  // out of memory; nothing else here throws
    const std::string why = std::string("in-process clang: ") + e.what();
    diagnostics(ctx, why.data(), why.size());
    return 1;
  }
}

extern "C" __attribute__((visibility("default"))) const char* sluice_clang_version() {
  static const std::string version = clang::getClangFullVersion() + " (in process, " + clang_path() + ")";
  return version.c_str();
}
