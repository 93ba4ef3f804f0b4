"""Plans a catalog relation's stream job again from what the catalog stores (its definition,
watermark, generated columns): what recovery builds the jobs from."""
from __future__ import annotations

from rw_cli.meta.catalog import INDEX, SINK, SOURCE, SUBSCRIPTION, TABLE, VIEW, RelationCatalog
from rw_cli.stream.plan import JobPlan


def job_plan(session, rel: RelationCatalog) -> JobPlan:
    from rw_cli.sql.stored_exprs import generated_exprs, watermark_expr

    if rel.kind == VIEW:
        return JobPlan()
    if rel.kind in (SOURCE, TABLE):
        return JobPlan(watermark=watermark_expr(rel) if rel.kind == TABLE else None,
                       generated=generated_exprs(rel) if rel.connector else [])
    if rel.kind == SUBSCRIPTION:
        from rw_cli.handler import subscription

        root, _ = subscription.plan(session, rel)
        return JobPlan(root=root)
    from rw_cli.sql.dialect import parse_statement

    tree = parse_statement(rel.definition)
    if rel.kind == SINK:
        from rw_cli.handler import create_sink

        root, _ = create_sink.plan(session, tree, existing=True)
        if rel.target is not None:
            return JobPlan(root=root, into_rows=create_sink.into_rows(session, rel))
    elif rel.kind == INDEX:
        from rw_cli.handler import create_index

        root = create_index.plan(session, tree, existing=True)[0]
    else:
        from rw_cli.handler import create_mv

        root, _ = create_mv.plan(session, tree, existing=True)
    return JobPlan(root=root)
