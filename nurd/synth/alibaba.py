def generate_alibaba_2018(*a, **k): raise NotImplementedError
