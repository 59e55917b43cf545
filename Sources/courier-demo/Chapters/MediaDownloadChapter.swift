import Courier
import CourierTransfers
import Foundation

/// The media chapter, download half: a large file arrives with a progress bar (drawn by the
/// demo, not the library), the user interrupts it, the app keeps the resume data, and the
/// download resumes from where it stopped — `Range` + `If-Range` — into a byte-identical,
/// digest-checked file.
func runMediaDownloadChapter(_ demo: Demo) async throws {
    demo.chapter("Media: download a large file, interrupt it, resume it")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-media-\(demo.namespace)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("trailer.mp4")
    let client = demo.makeClient()
    let size = 32 << 20
    // The server sends a Repr-Digest (RFC 9530) and pauses 10 ms per 251 KiB, so the bar moves.
    let video = Request<Void>.get("/media/\(size)", query: ["digest": "repr", "chunkDelay": "0.01"])

    // 1. Start, and "tap pause" at 40 %.
    let first = client.download(video, to: destination)
    let bar = ProgressBar()
    for await progress in first.progress {
        bar.draw(progress)
        if let fraction = progress.fractionCompleted, fraction >= 0.4 {
            first.cancel()
            break
        }
    }
    let resumeData: DownloadResumeData
    switch await first.result {
    case .success:
        bar.finish()
        demo.say("finished before the pause; nothing to resume")
        return
    case .failure(let error):
        bar.finish()
        guard error.isCancellation, let data = error.resumeData else { throw error }
        resumeData = data
    }
    demo.say("paused at \(mebibytes(resumeData.offset)) of \(mebibytes(resumeData.expectedLength ?? 0)) MiB")
    demo.say("validator \(resumeData.validator); partial bytes kept in \(resumeData.partialFileURL.lastPathComponent)")
    demo.say("nothing at the destination yet: \(!FileManager.default.fileExists(atPath: destination.path))")
    // An app persists it (Codable) and may resume after a relaunch.
    let saved = try JSONEncoder().encode(resumeData)
    demo.say("resume data: \(saved.count) bytes of JSON")

    // 2. Resume: only the rest crosses the network.
    let restored = try JSONDecoder().decode(DownloadResumeData.self, from: saved)
    let second = client.download(video, to: destination, resumingFrom: restored)
    let resumedBar = ProgressBar()
    for await progress in second.progress { resumedBar.draw(progress) }
    resumedBar.finish()
    let response = try await second.value
    let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
    demo.say(
        "HTTP \(response.statusCode) \(response.response.headers["Content-Range"] ?? ""); "
            + "file \(mebibytes((attributes[.size] as? NSNumber)?.int64Value ?? 0)) MiB, SHA-256 checked against Repr-Digest")
    // The metrics events count what each attempt's body delivered (streamed: counted as read).
    let events = DemoObservability.shared.metrics.all.filter { $0.pathTemplate.hasPrefix("/media/") }.suffix(2)
    let counts = events.map { "\(mebibytes(Int64($0.responseBodyBytes ?? 0))) MiB (\($0.errorKind ?? "complete"))" }
    demo.say("metrics: body bytes per attempt \(counts.joined(separator: " + "))")
}
