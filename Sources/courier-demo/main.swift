import Foundation
import Courier

// courier-demo: an app-shaped tour of Courier against the bundled reference server.
// Run it with scripts/demo (which starts the servers); or pass --base-url http://127.0.0.1:PORT
// [--second-url http://127.0.0.1:PORT2] (a second reference server for the environments chapter).
// Each chapter prints its summary lines; --verbose also shows every request's log line inline.

func serverURL() -> URL? {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: "--base-url"), index + 1 < arguments.count {
        return URL(string: arguments[index + 1])
    }
    return ProcessInfo.processInfo.environment["COURIER_API_URL"].flatMap(URL.init(string:))
}

guard let url = serverURL() else {
    FileHandle.standardError.write(Data("courier-demo: pass --base-url or set COURIER_API_URL (scripts/demo does this)\n".utf8))
    exit(2)
}

func secondServerURL() -> URL? {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: "--second-url"), index + 1 < arguments.count {
        return URL(string: arguments[index + 1])
    }
    return ProcessInfo.processInfo.environment["COURIER_API2_URL"].flatMap(URL.init(string:))
}

let second = secondServerURL()
let demo = Demo(serverURL: url, namespace: "demo-\(UUID().uuidString.prefix(8).lowercased())", secondServerURL: second ?? url)
Screen.shared.line(
    "Courier demo against \(url.absoluteString)\(second.map { " and \($0.absoluteString)" } ?? "") (namespace \(demo.namespace))")
do {
    try await runEnvironmentChapter(demo)
    try await runCoreChapters(demo)
    try await runCatalogChapter(demo)
    try await runSessionChapter(demo)
    try await runObservabilityChapter(demo)
    try await runGraphQLChapter(demo)
    try await runLiveChapter(demo)
    try await runLiveEventsChapter(demo)
    try await runOfflineChapter(demo)
    try await runMediaUploadChapter(demo)
    try await runMediaDownloadChapter(demo)
    try await runTransportCostChapter(demo)
    try DemoObservability.shared.finish()
    Screen.shared.line("\nDemo finished.")
} catch {
    try? DemoObservability.shared.finish()
    Screen.shared.line("\nDemo failed: \(error)")
    exit(1)
}
