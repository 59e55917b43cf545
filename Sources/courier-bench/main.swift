import Foundation

// courier-bench: speed goals measured against raw URLSession in the same run.
// Run with scripts/bench (starts the reference server), or:
//   swift run -c release courier-bench --base-url http://127.0.0.1:PORT [--requests N] [--rounds R]
//   [--only overhead|core|cache|refresh|offline|stream|download|upload|curl] [--mutations M]
//   --only stream: 1 GiB body and 1 M NDJSON records, throughput and peak RSS per process (`--stream-runs R`, 20 by default)
//   [--stream-bytes N] [--stream-records N]
//   swift run -c release courier-bench --only pipeline [--calls N] [--rounds R]   (no server needed;
//     `--profile "raw: standard()"` runs one case alone, for perf)
//   swift run -c release courier-bench --only events [--calls N] [--rounds R]   (no server; EventsBench.swift)
//   swift run -c release courier-bench --only fleet [--clients N] [--svg PATH]   (no server; FleetBench.swift)
// The 512 MiB multipart upload runs only with `--only upload` (`--upload-mib N`; UploadBench.swift).
// The 1 GiB downloads (20 runs per implementation, about 10-20 s each) run only with `--only download`
// (`--download-runs R`, `--download-bytes N` for
// another size); see DownloadBench.swift.
//   --only curl: CourierCurl vs URLSession vs libcurl (CPU per request, then 1 GiB downloads, one
//   process per case: `--only curl-download --case NAME` runs one)
//   --only curl-connections: connections opened and CPU per request against a plain libcurl multi
//   loop at concurrency 1, 16, 32 with the default host limit (`--concurrency 16,32`; CurlReuseBench.swift)
//   --only cpu: the client CPU table (issue 25): plain libcurl multi loop, raw URLSession, CurlTransport,
//   Courier over each transport with and without info logging + metrics, at concurrency 1, 16, 32,
//   against nginx (scripts/bench --only cpu starts it; `--requests 3000 --rounds 5`; CPUTableBench.swift)

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// Ends the process with status 1 after writing `<what> failed: <error>` on standard error.
func exitFailing(_ error: any Error, _ what: String = "courier-bench") -> Never {
    FileHandle.standardError.write(Data("\(what) failed: \(error)\n".utf8))
    exit(1)
}

/// Runs one section on its own and ends the process: status 0 when it finished, 1 when it threw.
@MainActor
func runAlone(_ what: String = "courier-bench", _ section: () async throws -> Void) async -> Never {
    do { try await section() } catch { exitFailing(error, what) }
    exit(0)
}

// One section: overhead, pipeline, core, cache, refresh, offline, stream, download, upload, curl, cpu.
let only = argument("--only")
func runs(_ section: String) -> Bool { only == nil || only == section }
let rounds = argument("--rounds").flatMap(Int.init) ?? 3

if only == "fleet" {
    // A simulation on a virtual clock: no server needed (FleetBench.swift).
    runFleetBench(arguments: argument)
    exit(0)
}

if only == "events" {
    // In-memory only: lifecycle events with and without a monitor (EventsBench.swift).
    await runAlone { try await runEventsBench(calls: argument("--calls").flatMap(Int.init) ?? 20_000, rounds: max(rounds, 5)) }
}

if only == "pipeline" {
    // In-memory only: no server needed.
    await runAlone {
        try await runPipelineCostBench(
            calls: argument("--calls").flatMap(Int.init) ?? 20_000, rounds: rounds, only: argument("--case"),
            profile: argument("--profile"))
    }
}

guard
    let serverURL = (argument("--base-url") ?? ProcessInfo.processInfo.environment["COURIER_API_URL"])
        .flatMap(URL.init(string:))
else {
    FileHandle.standardError.write(Data("courier-bench: pass --base-url or set COURIER_API_URL (scripts/bench does this)\n".utf8))
    exit(2)
}
if let spec = argument("--stream-child") {
    await runStreamChild(spec, serverURL: serverURL)
    exit(0)
}
let downloadBytes = argument("--download-bytes").flatMap(Int64.init) ?? (1 << 30)
if CommandLine.arguments.dropFirst().first == "download-1g" {
    await runAlone("courier-bench download-1g") {
        try await runDownloadChild(serverURL: serverURL, impl: argument("--impl") ?? "courier", bytes: downloadBytes)
    }
}

let requests = argument("--requests").flatMap(Int.init) ?? 2000

#if canImport(CourierCurl)
if only == "curl-download" {
    await runDownloadCase(argument("--case") ?? "", serverURL: serverURL)
    exit(0)
}
#endif

do {
    if runs("overhead") { try await runOverheadBench(calls: 20_000) }
    if runs("pipeline") {
        print("")
        try await runPipelineCostBench(calls: argument("--calls").flatMap(Int.init) ?? 20_000, rounds: rounds)
    }
    if runs("core") { try await runCoreBench(serverURL: serverURL, requests: requests, rounds: rounds) }
    if runs("cache") {
        print("")
        try await runCacheBench(serverURL: serverURL, requests: requests, rounds: rounds)
    }
    if runs("refresh") {
        print("")
        try await runRefreshStormBench(serverURL: serverURL, requests: 1000)
    }
    if only == "stream" {  // long (1 GiB, 1 M records): only when asked for
        print("")
        try await runStreamBench(serverURL: serverURL)
    }
    if only == "download" {
        try runDownloadBench(
            serverURL: serverURL, bytes: downloadBytes, runs: argument("--download-runs").flatMap(Int.init) ?? 20)
    }
    if only == "upload" {  // long (512 MiB): only when asked for
        try await runUploadBench(serverURL: serverURL, megabytes: argument("--upload-mib").flatMap(Int.init) ?? 512)
    }
    if runs("offline") {
        try await runOfflineBench(serverURL: serverURL, mutations: argument("--mutations").flatMap(Int.init) ?? 1000)
    }
    #if canImport(CourierCurl)
    if only == "curl" { try await runCurlBench(serverURL: serverURL, requests: requests, rounds: rounds) }
    if only == "curl-connections" {
        let perCell = argument("--requests").flatMap(Int.init) ?? 3000
        try await runCurlReuseBench(serverURL: serverURL, requests: perCell, rounds: rounds)
    }
    if only == "cpu" {
        try await runCPUTableBench(
            serverURL: serverURL, statusURL: argument("--status-url").flatMap(URL.init(string:)),
            requests: argument("--requests").flatMap(Int.init) ?? 3000, rounds: argument("--rounds").flatMap(Int.init) ?? 5)
    }
    #endif
} catch {
    exitFailing(error)
}
