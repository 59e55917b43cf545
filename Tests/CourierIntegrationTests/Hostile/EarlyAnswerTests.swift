import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// A server that answers a `POST` before it has read the body, then closes the connection with the
/// rest unread (`POST /hostile/early`, TestServer/routes_hostile.py): the kernel answers the
/// client's next body bytes with a reset, which can arrive before the client has read the answer.
/// The answer is the call's (RFC 9112 §9.5), and the call is never sent twice.
///
/// Measured: CurlTransport reads the 201 in every run (8 runs of 12 calls). FoundationNetworking's
/// URLSession on Linux fails some calls (3 runs of 6 had at least one) with
/// `networkConnectionLost` ("Send failure: Connection reset by peer") without having delivered a
/// response head: the answer is lost inside it, out of Courier's reach (a known issue there).
/// Such a `POST` is not sent again.
@Suite("An answer that arrives before the request body is sent is the call's answer")
struct EarlyAnswerTests {
    @Test("12 POSTs of 8 MiB, each answered 201 after 1 MiB and a close: each gets its 201 and is sent once")
    func eachPostGetsItsEarlyAnswer() async throws {
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
            } catch let error as NetworkError {
                answers.append("\(error.kind)")
            }
        }
        withKnownIssue("FoundationNetworking loses an answer that a reset follows", isIntermittent: true) {
            #expect(answers == Array(repeating: "201 created", count: calls))
        } when: {
            !TestTransport.isCurl
        }
        // Never sent twice, whatever the client read.
        let bucket = try await TestServers.stats(namespace: namespace)["hostile"] as? [String: Any] ?? [:]
        #expect(bucket["earlies"] as? Int == calls)
    }
}
