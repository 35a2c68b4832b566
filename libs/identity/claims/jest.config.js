module.exports = {
  displayName: 'identity-claims',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
