import Foundation
import Testing

@testable import Courier
@testable import CourierTransfers

/// The byte-range rules of resumable downloads (RFC 9110 §14, §13.1.5, §8.8) and the digest
/// fields (RFC 9530, RFC 3230), without I/O.
@Suite("Download rules")
struct DownloadRulesTests {
    static func response(_ status: Int, _ fields: [(String, String)]) -> HTTPResponse {
        HTTPResponse(statusCode: status, headers: HTTPHeaders(fields.map { HTTPHeaders.Field(name: $0.0, value: $0.1) }))
    }

    // MARK: Range and validators

    @Test func rangeAsksForEverythingFromTheOffset() {
        #expect(DownloadRules.rangeValue(from: 4_194_304) == "bytes=4194304-")
    }

    @Test func aStrongEntityTagIsTheValidatorExactlyAsSent() {
        let headers = HTTPHeaders([HTTPHeaders.Field(name: "ETag", value: " \"v1-abc\" ")])
        #expect(DownloadRules.strongValidator(in: headers) == "\"v1-abc\"")
    }

    @Test(arguments: ["W/\"v1\"", "v1", "\"unterminated", "\"a\"b\""])
    func weakOrMalformedEntityTagsAreNotValidators(_ tag: String) {
        // A weak tag must not go into If-Range (RFC 9110 §13.1.5); a Last-Modified next to it is
        // not used either: the server has an entity tag, and it is weak.
        let headers = HTTPHeaders([
            HTTPHeaders.Field(name: "ETag", value: tag),
            HTTPHeaders.Field(name: "Last-Modified", value: "Thu, 01 Jan 2026 00:00:00 GMT"),
            HTTPHeaders.Field(name: "Date", value: "Mon, 30 Nov 2026 21:00:00 GMT"),
        ])
        #expect(DownloadRules.strongValidator(in: headers) == nil)
    }

    @Test func lastModifiedIsStrongOnlyWhenDateIsAtLeastSixtySecondsLater() {
        // RFC 9110 §8.8.2.2: the client may treat Last-Modified as strong when it has no entity
        // tag and the response's Date is at least 60 s after it.
        func headers(date: String?) -> HTTPHeaders {
            var fields = [HTTPHeaders.Field(name: "Last-Modified", value: "Thu, 01 Jan 2026 00:00:00 GMT")]
            if let date { fields.append(HTTPHeaders.Field(name: "Date", value: date)) }
            return HTTPHeaders(fields)
        }
        #expect(
            DownloadRules.strongValidator(in: headers(date: "Thu, 01 Jan 2026 00:01:00 GMT"))
                == "Thu, 01 Jan 2026 00:00:00 GMT")
        #expect(DownloadRules.strongValidator(in: headers(date: "Thu, 01 Jan 2026 00:00:59 GMT")) == nil)
        #expect(DownloadRules.strongValidator(in: headers(date: nil)) == nil)
    }

    @Test func completeLengthIsKnownOnlyForIdentityBodiesWithOneContentLength() {
        #expect(DownloadRules.completeLength(ofWhole: HTTPHeaders(["Content-Length": "10"])) == 10)
        #expect(DownloadRules.completeLength(ofWhole: HTTPHeaders(["Content-Length": "10, 10"])) == 10)
        #expect(DownloadRules.completeLength(ofWhole: HTTPHeaders(["Content-Length": "10, 11"])) == nil)
        #expect(DownloadRules.completeLength(ofWhole: HTTPHeaders(["Content-Length": "-1"])) == nil)
        #expect(DownloadRules.completeLength(ofWhole: HTTPHeaders(["Transfer-Encoding": "chunked"])) == nil)
        #expect(
            DownloadRules.completeLength(ofWhole: HTTPHeaders(["Content-Length": "10", "Content-Encoding": "gzip"])) == nil)
        #expect(
            DownloadRules.completeLength(ofWhole: HTTPHeaders(["Content-Length": "10", "Content-Encoding": "identity"]))
                == 10)
    }

    // MARK: Content-Range (RFC 9110 §14.4)

    @Test(arguments: [
        ("bytes 0-99/1000", DownloadContentRange.bytes(first: 0, last: 99, complete: 1000)),
        ("BYTES 5-5/6", .bytes(first: 5, last: 5, complete: 6)),
        ("bytes 0-99/*", .bytes(first: 0, last: 99, complete: nil)),
        ("bytes */1000", .unsatisfied(complete: 1000)),
    ])
    func parsesContentRange(_ text: String, _ expected: DownloadContentRange) {
        #expect(DownloadContentRange(text) == expected)
    }

    @Test(arguments: [
        "bytes 10-5/100", "bytes 0-100/100", "bytes -5/100", "bytes 0-5", "items 0-5/10", "bytes */*", "bytes 0-+5/10",
        "bytes 0-5/10, bytes 6-9/10",
    ])
    func rejectsMalformedContentRange(_ text: String) {
        #expect(DownloadContentRange(text) == nil)
    }

    // MARK: What to do with the answer to a resume (RFC 9110 §13.1.5, §14.2, §15.3.7, §15.5.17)

    static let tag = "\"m10-v0\""

    @Test func a206FromTheOffsetWithTheSameValidatorContinues() {
        let response = Self.response(206, [("Content-Range", "bytes 4-9/10"), ("ETag", Self.tag)])
        #expect(
            DownloadRules.step(for: response, requestedOffset: 4, validator: Self.tag)
                == .write(offset: 4, completeLength: 10, discardsPartial: false))
    }

    @Test func a206ThatDoesNotStartAtTheOffsetRestarts() {
        let response = Self.response(206, [("Content-Range", "bytes 0-9/10"), ("ETag", Self.tag)])
        guard case .restart = DownloadRules.step(for: response, requestedOffset: 4, validator: Self.tag) else {
            Issue.record("expected a restart")
            return
        }
    }

    @Test(arguments: [[("ETag", "\"m10-v1\"")], [("ETag", "W/\"m10-v0\"")], []])
    func a206ForAnotherValidatorRestarts(_ tag: [(String, String)]) {
        let response = Self.response(206, [("Content-Range", "bytes 4-9/10")] + tag)
        guard case .restart = DownloadRules.step(for: response, requestedOffset: 4, validator: Self.tag) else {
            Issue.record("expected a restart")
            return
        }
    }

    @Test func a206WithoutAUsableContentRangeOrWithACodingRestarts() {
        for fields in [
            [("ETag", Self.tag)], [("ETag", Self.tag), ("Content-Range", "bytes */10")],
            [("ETag", Self.tag), ("Content-Range", "bytes 4-9/10"), ("Content-Encoding", "gzip")],
        ] {
            guard case .restart = DownloadRules.step(for: Self.response(206, fields), requestedOffset: 4, validator: Self.tag)
            else {
                Issue.record("expected a restart for \(fields)")
                continue
            }
        }
    }

    @Test func a200ToARangedRequestReplacesThePartialData() {
        // The server ignored Range, or If-Range did not match: the body is the whole (new) file.
        let response = Self.response(200, [("Content-Length", "12"), ("ETag", "\"m12-v1\"")])
        #expect(
            DownloadRules.step(for: response, requestedOffset: 4, validator: Self.tag)
                == .write(offset: 0, completeLength: 12, discardsPartial: true))
    }

    @Test func a416ForTheFileAlreadyHeldCompletesIt() {
        let response = Self.response(416, [("Content-Range", "bytes */10"), ("ETag", Self.tag)])
        #expect(DownloadRules.step(for: response, requestedOffset: 10, validator: Self.tag) == .complete(length: 10))
    }

    @Test func a416ForAnotherLengthOrValidatorRestarts() {
        for (offset, fields) in [
            (Int64(12), [("Content-Range", "bytes */10")]),
            (10, [("Content-Range", "bytes */10"), ("ETag", "\"m10-v9\"")]),
            (10, []),
        ] {
            guard
                case .restart = DownloadRules.step(for: Self.response(416, fields), requestedOffset: offset, validator: Self.tag)
            else {
                Issue.record("expected a restart for \(offset) \(fields)")
                continue
            }
        }
    }

    @Test func a416NamingAnotherWeakValidatorRestartsAndTheSameOneCompletes() {
        let date = "Thu, 01 Jan 2026 00:00:00 GMT"
        let other = "Fri, 02 Jan 2026 00:00:00 GMT"
        // Weak: a tag with W/, two tags, a date less than 60 s before the response's Date.
        for (validator, fields) in [
            (Self.tag, [("ETag", "W/\"m10-v1\"")]),
            (Self.tag, [("ETag", Self.tag), ("ETag", "W/\"m10-v1\"")]),
            (date, [("Last-Modified", other), ("Date", other)]),
        ] {
            let response = Self.response(416, [("Content-Range", "bytes */10")] + fields)
            guard case .restart = DownloadRules.step(for: response, requestedOffset: 10, validator: validator) else {
                Issue.record("expected a restart for \(fields)")
                continue
            }
        }
        for (validator, fields) in [(Self.tag, []), (date, [("Last-Modified", date)]), (Self.tag, [("Last-Modified", other)])] {
            let response = Self.response(416, [("Content-Range", "bytes */10")] + fields)
            #expect(DownloadRules.step(for: response, requestedOffset: 10, validator: validator) == .complete(length: 10))
        }
    }

    @Test func a206Or416ForAnotherCompleteLengthThanThePartialFilesRestarts() {
        // The partial bytes belong to a 20-byte representation: a 416 saying the representation
        // is 10 bytes must not complete a 10-byte prefix, nor a 206 of a 10-byte one continue it.
        let cases = [
            (416, [("Content-Range", "bytes */10")]),
            (416, [("Content-Range", "bytes */10"), ("ETag", Self.tag)]),
            (206, [("Content-Range", "bytes 4-9/10"), ("ETag", Self.tag)]),
        ]
        for (status, fields) in cases {
            let offset: Int64 = status == 416 ? 10 : 4
            guard
                case .restart = DownloadRules.step(
                    for: Self.response(status, fields), requestedOffset: offset, validator: Self.tag, knownLength: 20)
            else {
                Issue.record("expected a restart for \(status) \(fields)")
                continue
            }
        }
        #expect(
            DownloadRules.step(
                for: Self.response(416, [("Content-Range", "bytes */10")]), requestedOffset: 10, validator: Self.tag,
                knownLength: 10) == .complete(length: 10))
        #expect(
            DownloadRules.step(
                for: Self.response(206, [("Content-Range", "bytes 4-9/10"), ("ETag", Self.tag)]), requestedOffset: 4,
                validator: Self.tag, knownLength: 10) == .write(offset: 4, completeLength: 10, discardsPartial: false))
    }

    @Test func a206OfUnknownCompleteLengthTakesTheKnownLengthOrNone() {
        // `bytes a-b/*` (RFC 9110 §14.4): the part's end says nothing about the file's.
        func step(_ range: String, knownLength: Int64?) -> DownloadStep {
            DownloadRules.step(
                for: Self.response(206, [("Content-Range", range), ("ETag", Self.tag)]), requestedOffset: 4,
                validator: Self.tag, knownLength: knownLength)
        }
        #expect(step("bytes 4-6/*", knownLength: nil) == .write(offset: 4, completeLength: nil, discardsPartial: false))
        #expect(step("bytes 4-6/*", knownLength: 10) == .write(offset: 4, completeLength: 10, discardsPartial: false))
        #expect(step("bytes 4-9/*", knownLength: 10) == .write(offset: 4, completeLength: 10, discardsPartial: false))
        for range in ["bytes 4-10/*", "bytes 4-99/*", "bytes 3-6/*", "bytes 5-6/*"] {
            guard case .restart = step(range, knownLength: 10) else {
                Issue.record("expected a restart for \(range)")
                continue
            }
        }
    }

    @Test func withoutRangeA200IsWrittenFromZeroAndA206IsInvalid() {
        #expect(
            DownloadRules.step(for: Self.response(200, [("Content-Length", "3")]), requestedOffset: nil, validator: nil)
                == .write(offset: 0, completeLength: 3, discardsPartial: false))
        guard
            case .invalid = DownloadRules.step(
                for: Self.response(206, [("Content-Range", "bytes 0-2/3")]), requestedOffset: nil, validator: nil)
        else {
            Issue.record("expected invalid")
            return
        }
    }

    // MARK: Digests (RFC 9530, RFC 3230)

    static let digest = Array(0..<32).map { UInt8($0) }
    static let base64 = Data(digest).base64EncodedString()

    @Test func reprDigestWinsAndCoversTheRepresentation() {
        let headers = HTTPHeaders([
            HTTPHeaders.Field(name: "Content-Digest", value: "sha-256=:\(Data(repeating: 1, count: 32).base64EncodedString()):"),
            HTTPHeaders.Field(name: "Repr-Digest", value: "sha-512=:AAAA:, sha-256=:\(Self.base64):"),
        ])
        #expect(
            DownloadDigest.expected(in: headers)
                == DownloadDigest(sha256: Self.digest, scope: .representation, field: "Repr-Digest"))
    }

    @Test func contentDigestCoversTheResponseBytes() {
        let headers = HTTPHeaders(["Content-Digest": "sha-256=:\(Self.base64):;p=1"])
        #expect(
            DownloadDigest.expected(in: headers) == DownloadDigest(sha256: Self.digest, scope: .content, field: "Content-Digest"))
    }

    @Test func legacyDigestIsCaseInsensitive() {
        let headers = HTTPHeaders(["Digest": "MD5=abc, SHA-256=\(Self.base64)"])
        #expect(
            DownloadDigest.expected(in: headers)
                == DownloadDigest(sha256: Self.digest, scope: .representation, field: "Digest"))
    }

    @Test func noDigestForOtherAlgorithmsMalformedValuesOrCodedBodies() {
        #expect(DownloadDigest.expected(in: HTTPHeaders(["Repr-Digest": "sha-512=:\(Self.base64):"])) == nil)
        #expect(DownloadDigest.expected(in: HTTPHeaders(["Repr-Digest": "sha-256=\(Self.base64)"])) == nil)
        #expect(DownloadDigest.expected(in: HTTPHeaders(["Repr-Digest": "sha-256=:AAAA:"])) == nil)
        #expect(
            DownloadDigest.expected(
                in: HTTPHeaders(["Repr-Digest": "sha-256=:\(Self.base64):", "Content-Encoding": "gzip"])) == nil)
    }
}
