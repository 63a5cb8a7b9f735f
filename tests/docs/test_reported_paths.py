"""pytest names every test by a path that exists: run as scripts/test runs it
(plot/tests and tests/docs together), it took plot/ for the root, from
plot/pyproject.toml, and reported this folder's tests as plot/test_docs.py
(issue 36, item 4). scripts/test passes --rootdir=.; this test fails where the
root a run chose does not hold the file it reports."""


def test_this_test_is_reported_by_a_path_that_exists(request):
    reported = request.node.nodeid.split("::")[0]
    path = request.config.rootpath / reported
    assert path.is_file(), f"reported as {reported!r}, which is not a file under {request.config.rootpath}"
    assert path.resolve() == request.path.resolve()
