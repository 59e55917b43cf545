import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// A server that answers a `POST` before it has read the body, then closes the connection with the
/// rest unread (`POST /hostile/early`, TestServer/routes_hostile.py): the kernel answers the
/// client's next body bytes with a reset (RFC 9112 §9.6 asks servers to close in stages to avoid
/// exactly this). Whether the client reads the answer first is a race: when the reset fails its next
/// write before it has read the head, the answer is gone for any client. What must hold: each call
/// ends with its answer or a typed lost connection, and none is sent twice.
///
/// Measured: CurlTransport read the 201 in 8 runs of 12 calls alone, and lost 1 of 12 in a loaded
/// full pass (libcurl fails the transfer on the send error, `CURLE_SEND_ERROR`, before it has read
/// the head: checked with a probe). FoundationNetworking's URLSession on Linux lost some calls in
/// 3 runs of 6, likewise without a head. A lost call is `networkConnectionLost`, and such a `POST`
/// is not sent again.
@Suite("An answer that arrives before the request body is sent")
struct EarlyAnswerTests {
    @Test(
        "12 POSTs of 8 MiB, each answered 201 after 1 MiB and a close: each gets its 201 or a lost connection, and is sent once")
    func eachPostGetsItsEarlyAnswerOrALostConnection() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let body = Data(count: 8 << 20)
        let calls = 12
        var answers: [String] = []
        for _ in 0..<calls {
            do {
                let answer = try await client.response(
                    for: Request<Data>.post(
                        "/hostile/early", body: .data(body, contentType: "application/octet-stream"),
                        query: ["after_kib": "1024"]))
                answers.append("\(answer.response.statusCode) \(String(decoding: answer.value, as: UTF8.self))")
            } catch NetworkError.transport(let error) where error.code == .networkConnectionLost {
                answers.append("lost")
            }
        }
        #expect(answers.allSatisfy { $0 == "201 created" || $0 == "lost" }, "\(answers)")
        withKnownIssue("a reset that arrives before the answer was read loses it", isIntermittent: true) {
            #expect(!answers.contains("lost"), "\(answers)")
        }
        // Never sent twice, whatever the client read.
        let bucket = try await TestServers.stats(namespace: namespace)["hostile"] as? [String: Any] ?? [:]
        #expect(bucket["earlies"] as? Int == calls)
    }
}
