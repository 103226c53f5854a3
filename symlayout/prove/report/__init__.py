"""Reports of a verdict for people: explanations of a slot or a counterexample
(:mod:`.explain`), pictures (:mod:`.pictures`, :mod:`.threadmap_pictures`), the HTML
report (:mod:`.report_html`) and the configuration as a CuTe C++ program (:mod:`.cute_snippet`)."""
