import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension LoggingInterceptor {
    /// Where a call's request and response entries are in its ``RecordJournal``.
    struct ExchangeIndices: Sendable {
        let request: Int
        let response: Int
    }

    /// `response`'s streamed body, counted as its consumer reads it: when it ends, the logger gets
    /// a body-end entry (at its level) and the recorders the exchange with the bytes read.
    func countedBody(
        of response: HTTPResponse, request: URLRequest, context: RequestContext, journal: RecordJournal,
        _ indices: ExchangeIndices
    ) -> MessageBody {
        let headAt = ContinuousClock.now
        let method = request.httpMethod.map(HTTPMethod.init(rawValue:)) ?? context.method
        let (requestID, statusCode) = (context.requestID, response.statusCode)
        let (timings, cacheOutcome) = (context.taskTimings, context.cacheOutcome)
        let (logger, recorders) = (logger, recorders)
        return response.body.counted { bytes, outcome in
            let duration = ContinuousClock.now - headAt
            if let logger, LogFormatting.level(ofBodyEnd: outcome, statusCode: statusCode) >= logger.minimumLevel {
                let summary = journal.summary(at: indices.response, request: indices.request)
                logger.log(
                    LogFormatting.bodyEndEntry(
                        LogFormatting.BodyEnd(
                            statusCode: statusCode, method: method, pathTemplate: summary.pathTemplate, duration: duration,
                            bytes: bytes, outcome: outcome, requestID: requestID, url: summary.url)))
            }
            guard !recorders.isEmpty, let requestRecord = journal.record(at: indices.request, as: RequestRecord.self),
                var responseRecord = journal.record(at: indices.response, as: ResponseRecord.self)
            else { return }
            responseRecord.bodySize = Int(clamping: bytes)
            let exchange = NetworkExchange(
                request: requestRecord, outcome: .response(responseRecord), timings: timings, cacheOutcome: cacheOutcome)
            for recorder in recorders { recorder.record(exchange) }
        }
    }
}
