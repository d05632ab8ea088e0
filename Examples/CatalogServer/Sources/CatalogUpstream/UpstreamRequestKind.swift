/// The four kinds of product request the upstream serves and counts in its ``UpstreamStats``.
public enum UpstreamRequestKind: Sendable, Hashable, CaseIterable {
    /// `GET /products/{id}`.
    case product
    /// `GET /products?ids=...`.
    case batch
    /// `GET /products?cursor=...&limit=...`.
    case page
    /// `PUT /products/{id}`.
    case write
}
