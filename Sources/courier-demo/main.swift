import Foundation
import Courier

// courier-demo: an app-shaped tour of Courier against the bundled reference server.
// Run it with scripts/demo (which starts the servers); or pass --base-url http://127.0.0.1:PORT
// [--second-url http://127.0.0.1:PORT2] (a second reference server for the environments chapter).
// Each chapter prints its summary lines; --verbose also shows every request's log line inline.

/// The URL after `option` on the command line, else the one in the environment variable `variable`.
func serverURL(option: String, variable: String) -> URL? {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: option), index + 1 < arguments.count {
        return URL(string: arguments[index + 1])
    }
    return ProcessInfo.processInfo.environment[variable].flatMap(URL.init(string:))
}

guard let url = serverURL(option: "--base-url", variable: "COURIER_API_URL") else {
    FileHandle.standardError.write(Data("courier-demo: pass --base-url or set COURIER_API_URL (scripts/demo does this)\n".utf8))
    exit(2)
}

let second = serverURL(option: "--second-url", variable: "COURIER_API2_URL")
let demo = Demo(serverURL: url, namespace: "demo-\(UUID().uuidString.prefix(8).lowercased())", secondServerURL: second ?? url)
Screen.shared.line(
    "Courier demo against \(url.absoluteString)\(second.map { " and \($0.absoluteString)" } ?? "") (namespace \(demo.namespace))")
/// The tour, in order.
let chapters: [(Demo) async throws -> Void] = [
    runEnvironmentChapter, runCoreChapters, runCatalogChapter, runSessionChapter, runObservabilityChapter,
    runGraphQLChapter, runLiveChapter, runLiveEventsChapter, runOfflineChapter, runMediaUploadChapter,
    runMediaDownloadChapter, runTransportCostChapter,
]
do {
    for chapter in chapters { try await chapter(demo) }
    try DemoObservability.shared.finish()
    Screen.shared.line("\nDemo finished.")
} catch {
    try? DemoObservability.shared.finish()
    Screen.shared.line("\nDemo failed: \(error)")
    exit(1)
}
