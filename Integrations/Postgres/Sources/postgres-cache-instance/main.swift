// A server instance of its own for the multi-process tests: a `KeyedStore` over a `PostgresCache`
// that other instances share, driven by line commands on standard input and answering on standard
// output (see InstanceCommand.swift for the protocol, InstanceSettings.swift for the arguments).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

guard let settings = InstanceSettings.parse(Array(CommandLine.arguments.dropFirst())) else {
    say(InstanceSettings.usage)
    exit(2)
}
exit(await InstanceLifecycle.run(settings))
