"""The verdict: a property's result and its counterexample (:mod:`.result`), the
``[expect]`` table applied to it (:mod:`.expect`) and the summary of many (:mod:`.summary`)."""
