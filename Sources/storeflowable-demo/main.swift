// storeflowable-demo: a tour of StoreFlowable against a simulated origin.
//
// Run it with no argument for the whole tour, or with part flags (see --help). It needs no set-up and
// ends by itself in about a second. The --disk part keeps its cache in the system's temporary directory,
// so that the next run finds it there.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `--help` text.
let usage: String = {
    let flags = Part.allCases.map { part in
        "  " + part.flag.padding(to: 15) + part.summary
    }
    return """
        usage: storeflowable-demo [--help] [PART...]

        A tour of StoreFlowable against a simulated in-process origin.
        With no PART every part runs, in this order; give one or more
        PART flags to run only those:

        \(flags.joined(separator: "\n"))

        --disk keeps its cache in the folder storeflowable-demo of the
        system's temporary directory; delete it to start over.
        """
}()

/// What the command line asks for.
enum Command {
    case help
    case run([Part])
    case invalid(String)
}

/// Parses the arguments: `--help`/`-h`, or any number of part flags (none means every part).
func parse(_ arguments: ArraySlice<String>) -> Command {
    var selected: Set<Part> = []
    for argument in arguments {
        if argument == "--help" || argument == "-h" { return .help }
        guard let part = Part.allCases.first(where: { part in part.flag == argument }) else {
            return .invalid(argument)
        }
        selected.insert(part)
    }
    return .run(selected.isEmpty ? Part.allCases : Part.allCases.filter(selected.contains))
}

/// Writes `message` and a newline to standard error.
func printToStandardError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

switch parse(CommandLine.arguments.dropFirst()) {
case .help:
    print(usage)
case .invalid(let argument):
    printToStandardError("storeflowable-demo: unknown argument '\(argument)'\n\n\(usage)")
    exit(2)
case .run(let parts):
    // A safety net: if the library ever left a part waiting forever, say so instead of hanging.
    let watchdog = Task {
        try? await Task.sleep(for: .seconds(4))
        guard !Task.isCancelled else { return }
        printToStandardError("storeflowable-demo: a part is still waiting after 4 s; stopping")
        exit(3)
    }
    let problems = await runTour(parts)
    watchdog.cancel()
    print()
    if problems.isEmpty {
        print("Every part behaved as promised.")
    } else {
        print("\(problems.count) promise(s) broken:")
        for problem in problems { print("  - \(problem)") }
        exit(1)
    }
}
